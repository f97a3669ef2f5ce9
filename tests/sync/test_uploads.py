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
from cmssync.sync import plan_file_json
from cmssync.sync.plan_file_json import split_plan_file
from cmssync.sync.plan_files import read_plan_file, write_plan_file
from cmssync.sync.uploads import decode_blobs, sha256_of

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


def saved_plan(tmp_path: Path, plan: Plan, blobs: dict[str, str]) -> Path:
    """A plan file holding ``blobs`` as they are given (altered, missing, extra)."""
    where = tmp_path / "plan.json"
    document = json.loads(plan.model_dump_json())
    where.write_text(json.dumps({**document, "blobs": blobs}), encoding="utf-8")
    return where


def test_blobs_are_keyed_by_sha256_and_decode_to_the_bytes(tmp_path: Path) -> None:
    plan = plan_of(upload("images/logo.png", LOGO), upload("copy.png", LOGO, "replace"))
    where = tmp_path / "plan.json"
    write_plan_file(plan, where, content_with(tmp_path, {"images/logo.png": LOGO, "copy.png": LOGO}))
    encoded = json.loads(where.read_text())["blobs"]
    assert encoded == {sha256_of(LOGO): base64.b64encode(LOGO).decode()}  # one blob for the same bytes
    saved = decode_blobs(plan, split_plan_file(where)[1], where)
    assert {key: path.read_bytes() for key, path in saved.blobs.items()} == {sha256_of(LOGO): LOGO}
    saved.close()
    assert not saved.directory.exists()


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 65535, 3 << 16, (3 << 16) + 1, 1 << 21])
def test_bytes_of_any_length_round_trip_through_the_stream(tmp_path: Path, size: int) -> None:
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    plan = plan_of(upload("big.bin", data))
    where = tmp_path / "plan.json"
    write_plan_file(plan, where, content_with(tmp_path, {"big.bin": data}))
    assert json.loads(where.read_text())["blobs"] == {sha256_of(data): base64.b64encode(data).decode()}
    assert read_plan_file(where) == plan
    saved = decode_blobs(plan, split_plan_file(where)[1], where)
    assert saved.blobs[sha256_of(data)].read_bytes() == data
    saved.close()


def test_a_tampered_blob_is_refused_naming_the_file(tmp_path: Path) -> None:
    plan = plan_of(upload("images/logo.png", LOGO))
    where = saved_plan(tmp_path, plan, {sha256_of(LOGO): base64.b64encode(b"other bytes").decode()})
    with pytest.raises(PlanError) as refused:
        decode_blobs(plan, split_plan_file(where)[1], where)
    assert str(refused.value) == (
        f"{where}: the bytes of file images/logo.png do not match the plan ({sha256_of(LOGO)}, the bytes hash to "
        f"{sha256_of(b'other bytes')}): the plan file was altered or damaged; nothing applied"
    )


@pytest.mark.parametrize(
    ("blobs", "refusal"),
    [
        ({}, "the plan file holds no bytes for file images/logo.png"),
        ({sha256_of(LOGO): "not base64!"}, "the bytes of file images/logo.png are not base64"),
        (
            {sha256_of(LOGO): base64.b64encode(LOGO * 2).decode()},
            "do not match the plan (" + sha256_of(LOGO) + ": more than its 17 bytes)",
        ),
        (
            {sha256_of(LOGO): base64.b64encode(LOGO).decode(), sha256_of(b"x" * 99): base64.b64encode(b"x").decode()},
            "the plan file holds bytes no upload of the plan sends",
        ),
    ],
)
def test_a_missing_garbled_oversized_or_unreferenced_blob_is_refused(
    tmp_path: Path, blobs: dict[str, str], refusal: str
) -> None:
    plan = plan_of(upload("images/logo.png", LOGO))
    where = saved_plan(tmp_path, plan, blobs)
    with pytest.raises(PlanError, match=re.escape(refusal)):
        decode_blobs(plan, split_plan_file(where)[1], where)


def test_a_plan_too_large_without_its_uploads_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan_file_json, "MAX_PLAN_BYTES", 1000)
    plan = plan_of(*(upload(f"f{n}.txt", str(n).encode()) for n in range(20)))
    where = saved_plan(tmp_path, plan, {})
    with pytest.raises(PlanError, match=r"plan.json: the plan holds 0 MiB besides its uploads' bytes, more than"):
        read_plan_file(where)


def test_bytes_changed_since_planning_are_not_saved(tmp_path: Path) -> None:
    plan = plan_of(upload("images/logo.png", LOGO))
    where = tmp_path / "plan.json"
    with pytest.raises(PlanError, match=re.escape("files/images/logo.png changed while the plan was made")):
        write_plan_file(plan, where, content_with(tmp_path, {"images/logo.png": b"edited since"}))
    assert not where.exists()


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


@pytest.mark.parametrize(
    "text", ['"blobs"', 'a "quoted" {brace} [bracket] back\\slash', "\\", '\\"', "blobs", "é ✓ \u2028", "}" * 50]
)
def test_the_plan_around_its_blobs_reads_back_whatever_its_strings_hold(tmp_path: Path, text: str) -> None:
    """The blob scanner only follows the JSON's structure: strings with quotes, backslashes, braces or the word
    "blobs" in the plan are read back as they were, and the blob is found."""
    plan = plan_of(upload("images/logo.png", LOGO)).model_copy(update={"warnings": (text, f"x{text}x")})
    where = tmp_path / "plan.json"
    write_plan_file(plan, where, content_with(tmp_path, {"images/logo.png": LOGO}))
    assert read_plan_file(where) == plan
    assert set(split_plan_file(where)[1]) == {sha256_of(LOGO)}
