"""The bytes a plan file carries (``cmssync.sync.uploads``): written from the content, each checked against its
SHA-256 before anything is applied, never shown."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from cmssync.content.loader import load_content
from cmssync.content.site import SiteContent
from cmssync.errors import PlanError
from cmssync.plan.actions import Action, FieldChange, Plan, Precondition
from cmssync.plan.asset_forms import FileForm
from cmssync.render.text import render_json, render_text
from cmssync.sync.plan_files import read_plan_file, write_plan_file
from cmssync.sync.uploads import decode_blobs, encode_blobs, sha256_of

LOGO = b"the reviewed logo"


def upload(path: str, data: bytes, op: str = "create") -> Action:
    form = FileForm(sha256=sha256_of(data), size=len(data))
    precondition = Precondition(absent=True) if op == "create" else Precondition(remote_id="uuid-1")
    change = FieldChange(field="sha256", after=form.sha256)
    return Action(kind="file", key=path, op=op, changes=(change,), precondition=precondition, file=form)  # type: ignore[arg-type]


def plan_of(*actions: Action) -> Plan:
    return Plan(site="https://example.test", content_digest="d", actions=actions)


def content_with(tmp_path: Path, files: dict[str, bytes]) -> SiteContent:
    root = tmp_path / "site"
    for path, data in files.items():
        (root / "files" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "files" / path).write_bytes(data)
    (root / "cmssync.yaml").write_text("site: {url: 'https://example.test'}\n")
    return load_content(root)


def test_blobs_are_keyed_by_sha256_and_decode_to_the_bytes(tmp_path: Path) -> None:
    plan = plan_of(upload("images/logo.png", LOGO), upload("copy.png", LOGO, "replace"))
    encoded = encode_blobs(plan, content_with(tmp_path, {"images/logo.png": LOGO, "copy.png": LOGO}))
    assert encoded == {sha256_of(LOGO): base64.b64encode(LOGO).decode()}  # one blob for the same bytes
    assert decode_blobs(plan, encoded, tmp_path / "plan.json").blobs == {sha256_of(LOGO): LOGO}


def test_a_tampered_blob_is_refused_naming_the_file(tmp_path: Path) -> None:
    plan = plan_of(upload("images/logo.png", LOGO))
    where = tmp_path / "plan.json"
    tampered = {sha256_of(LOGO): base64.b64encode(b"other bytes").decode()}
    with pytest.raises(PlanError) as refused:
        decode_blobs(plan, tampered, where)
    assert str(refused.value) == (
        f"{where}: the bytes of file images/logo.png do not match the plan ({sha256_of(LOGO)}, the bytes hash to "
        f"{sha256_of(b'other bytes')}): the plan file was altered or damaged; nothing applied"
    )


def test_a_missing_or_garbled_blob_is_refused(tmp_path: Path) -> None:
    plan = plan_of(upload("images/logo.png", LOGO))
    where = tmp_path / "plan.json"
    with pytest.raises(PlanError, match=re.escape("the plan file holds no bytes for file images/logo.png")):
        decode_blobs(plan, {}, where)
    with pytest.raises(PlanError, match=re.escape("the bytes of file images/logo.png are not base64")):
        decode_blobs(plan, {sha256_of(LOGO): "not base64!"}, where)


def test_bytes_changed_since_planning_are_not_saved(tmp_path: Path) -> None:
    plan = plan_of(upload("images/logo.png", LOGO))
    with pytest.raises(PlanError, match=re.escape("files/images/logo.png changed while the plan was made")):
        encode_blobs(plan, content_with(tmp_path, {"images/logo.png": b"edited since"}))


def test_the_plan_file_carries_the_blobs_and_no_rendering_shows_them(tmp_path: Path) -> None:
    plan = plan_of(upload("images/logo.png", LOGO))
    saved = tmp_path / "plan.json"
    write_plan_file(plan, saved, content_with(tmp_path, {"images/logo.png": LOGO}))
    assert json.loads(saved.read_text())["blobs"] == {sha256_of(LOGO): base64.b64encode(LOGO).decode()}
    read = read_plan_file(saved)
    assert read == plan
    shown = render_json(read) + render_text(read)
    assert base64.b64encode(LOGO).decode() not in shown
    assert "blobs" not in shown


def test_a_plan_file_of_another_format_is_refused(tmp_path: Path) -> None:
    saved = tmp_path / "plan.json"
    saved.write_text(json.dumps({"format_version": 1, "site": "https://example.test", "content_digest": "d"}))
    with pytest.raises(PlanError, match="a plan file of format 1, and this cmssync reads format 2"):
        read_plan_file(saved)
