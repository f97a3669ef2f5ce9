"""A saved plan carries everything apply writes: ``apply DIR PLANFILE`` reads no content directory (issue 24).

The content directory is deleted after ``plan -o`` (the state lives outside it, as in CI); ``apply`` writes pages,
uploads new and replaced files from the bytes the plan file carries and creates a user whose password it reads from
the variable the plan names. The content, put back, then plans nothing.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
from pathlib import Path

import httpx
import pytest

from cmssync.cli import main
from cmssync.emulator.embedded import Sandbox
from cmssync.errors import ConfigError, PlanError
from cmssync.sync.applying import ApplyRequest, apply_site
from cmssync.sync.workspace import open_workspace
from tests.support.rawsite import RawSite
from tests.support.sites import Site, set_sandbox_environment
from tests.support.tokens import sandbox_token

NEWS = """name: News
areas:
  Main:
    - type: page_title
      value: {useCustomTitle: true, titleText: Latest}
    - type: content
      value:
        content: '<p>See <a href="${page-link:/about}">us</a> and <img src="${file:images/badge.png}"></p>'
"""
BADGE = b"\x89PNG a new badge, not a real image"
PRICES = b"Price list, 2027: everything 10% off\n"
LEE_PASSWORD = "lee-secret-1"


def site_bytes(raw: RawSite, name: str) -> bytes:
    """The bytes the sandbox serves for its one file named ``name``."""
    [found] = [f for f in raw.all("/files") if (f.get("url") or "").split("?")[0].endswith("/" + name)]
    return httpx.get(found["url"]).content


@pytest.fixture
def planned(example: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """The example applied, then edited (a page changed and one added, a file added and one replaced, a user added)
    and planned with ``plan -o``; the plan file."""
    assert not asyncio.run(example.apply()).failed, example.last_output
    set_sandbox_environment(monkeypatch, example.sandbox, example.state_path.parent)
    monkeypatch.setenv("LEE_PASSWORD", LEE_PASSWORD)
    example.edit("pages/index.yaml", "We design, build and host", "We design and build")
    example.write("pages/news.yaml", NEWS)
    (example.root / "files/images/badge.png").write_bytes(BADGE)
    example.write("files/images/badge.png.yaml", "title: Badge\nfolder: /images\n")
    (example.root / "files/documents/price-list.txt").write_bytes(PRICES)
    with (example.root / "users.yaml").open("a") as users:
        users.write("- username: lee.writer\n  email: lee@example.com\n  password: ${env:LEE_PASSWORD}\n")
    plan_file = tmp_path / "plan.json"
    assert main(["plan", str(example.root), "-o", str(plan_file)]) == 0
    capsys.readouterr()
    return plan_file


def test_a_saved_plan_applies_with_the_content_directory_gone(
    example: Site, planned: Path, raw: RawSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = json.loads(planned.read_text())
    ops = {(a["kind"], a["key"]): a["op"] for a in saved["actions"]}
    assert ops == {
        ("file", "documents/price-list.txt"): "replace",
        ("file", "images/badge.png"): "create",
        ("page", "/"): "update",
        ("page", "/news"): "create",
        ("page", "/services"): "update",  # it links to the replaced file: re-pointed to the new copy
        ("user", "lee.writer"): "create",
    }
    assert sorted(base64.b64decode(blob) for blob in saved["blobs"].values()) == sorted([BADGE, PRICES])
    assert "LEE_PASSWORD" in planned.read_text()
    assert LEE_PASSWORD not in planned.read_text()
    kept = tmp_path / "content-kept"
    shutil.move(example.root, kept)  # the whole content directory; the state is outside it

    assert main(["apply", str(example.root), str(planned)]) == 0
    out, err = capsys.readouterr()
    assert f"the content directory {example.root} does not exist: the plan is applied as saved" in err
    assert "Apply complete: 6 succeeded, 0 failed, 0 skipped" in out, out + err
    assert LEE_PASSWORD not in out + err
    assert not example.root.exists()
    assert "We design and build" in raw.blocks("/", "Main")[1][1]["content"]
    news = raw.blocks("/news", "Main")
    assert news[0][1]["titleText"] == "Latest"
    assert '<a href="{ccm:export:page:/about}">' in news[1][1]["content"]
    assert site_bytes(raw, "badge.png") == BADGE
    assert site_bytes(raw, "price-list.txt") == PRICES  # the old copy was deleted: exactly one left
    assert sandbox_token(example.sandbox, username="lee.writer", password=LEE_PASSWORD)

    assert main(["apply", str(example.root), str(planned)]) == 1  # applied twice: refused, nothing written
    assert "the plan file is stale: file documents/price-list.txt (site file" in capsys.readouterr().err
    assert site_bytes(raw, "badge.png") == BADGE  # still one copy

    shutil.copytree(kept, example.root)
    after = asyncio.run(example.plan())
    assert after.is_empty, [(a.kind, a.key, a.op) for a in after.actions]


def test_a_saved_plan_is_refused_when_the_content_directory_holds_other_content(
    example: Site, planned: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example.edit("pages/index.yaml", "We design and build", "We build")
    assert main(["apply", str(example.root), str(planned)]) == 1
    assert "the plan file is stale: the content changed since it was made" in capsys.readouterr().err


def test_a_tampered_upload_is_refused_before_anything_is_written(
    example: Site, planned: Path, sandbox: Sandbox, raw: RawSite
) -> None:
    saved = json.loads(planned.read_text())
    badge = next(a for a in saved["actions"] if a["key"] == "images/badge.png")["file"]["sha256"]
    saved["blobs"][badge] = base64.b64encode(b"<script>not the reviewed bytes</script>").decode()
    planned.write_text(json.dumps(saved))
    shutil.rmtree(example.root)
    files = len(raw.all("/files"))
    workspace = open_workspace(example.root, overrides=example.overrides(), missing_ok=True)
    with pytest.raises(PlanError) as refused:
        asyncio.run(apply_site(workspace, ApplyRequest(plan_file=planned)))
    assert str(refused.value).startswith(f"{planned}: the bytes of file images/badge.png do not match the plan")
    assert "the plan file was altered or damaged; nothing applied" in str(refused.value)
    assert len(raw.all("/files")) == files
    assert raw.page_by_path("/news") is None


def test_an_unset_password_variable_is_refused_as_in_a_plain_apply(
    example: Site, planned: Path, raw: RawSite, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.rmtree(example.root)
    monkeypatch.delenv("LEE_PASSWORD")
    assert main(["apply", str(example.root), str(planned)]) == 1
    err = capsys.readouterr().err
    assert "users.yaml:9:3: user 'lee.writer': environment variable LEE_PASSWORD is not set" in err
    assert raw.page_by_path("/news") is None  # checked before the first write


@pytest.mark.parametrize("state", [".cmssync/state.json", "elsewhere"])
def test_a_missing_directory_is_refused_when_the_state_would_be_made_in_it(
    example: Site, planned: Path, tmp_path: Path, state: str
) -> None:
    """Issue 37 item 7: the docs say the state must then live elsewhere; a state inside the missing directory would
    be a new, empty one there (a saved plan applied as if nothing were managed)."""
    shutil.rmtree(example.root)
    overrides = {**example.overrides(), "state": state if state != "elsewhere" else str(tmp_path / "state.json")}
    if state == "elsewhere":
        assert open_workspace(example.root, overrides=overrides, missing_ok=True).has_content is False
        return
    with pytest.raises(ConfigError, match="does not exist and the state would be made inside it") as refused:
        open_workspace(example.root, overrides=overrides, missing_ok=True)
    assert "point CMSSYNC_STATE (or state:) at the state's place" in str(refused.value)
    assert not example.root.exists()
