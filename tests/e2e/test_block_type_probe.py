"""Block types a theme or package adds (issue 36 item 3): ``cmssync probe-block-type HANDLE`` round-trips one block
of the type on a copy and records the verdict for the site; pull then writes the type's blocks as content, which
plan and apply write; a type never probed, or probed as asymmetric, stays ``keep:`` with a reason naming the
command. On the sandbox's ``callout`` (symmetric) and ``countdown`` (its update refused: a key its read never
shows) — :mod:`cmssync.emulator.blocktypes.theme`; on a real site: ``tests/realsite/test_block_type_probe.py``."""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from cmssync.cli import main
from cmssync.commands.pull import run_pull
from cmssync.emulator.embedded import Sandbox
from cmssync.errors import ConfigError
from cmssync.sync.block_type_probe import probe_block_type
from tests.support.rawsite import RawSite
from tests.support.sites import Site, set_sandbox_environment
from tests.support.tokens import sandbox_token

CALLOUT = {"heading": "Questions? Call us", "body": "We answer on weekdays.", "buttonText": "Call", "showIcon": "1"}
SEED: dict[str, Any] = {
    "pages": [
        {"path": "/", "name": "Home", "type": "page", "template": "full"},
        {
            "path": "/contact",
            "name": "Contact",
            "type": "page",
            "template": "full",
            "areas": {"Main": [{"type": "content", "value": {"content": "<p>Write to us.</p>"}},
                               {"type": "callout", "value": CALLOUT}]},
        },
        {
            "path": "/launch",
            "name": "Launch",
            "type": "page",
            "template": "full",
            "areas": {"Main": [{"type": "countdown", "value": {"title": "Launch in", "endDate": "2027-01-01"}}]},
        },
    ],
}  # fmt: skip


@pytest.fixture
def site(sandbox_server: Sandbox, tmp_path: Path) -> Site:
    return Site.seeded(sandbox_server, tmp_path, SEED)


def _blocks(site: Site, path: str) -> list[tuple[str, dict[str, Any]]]:
    reader = RawSite(site.sandbox)
    try:
        return reader.blocks(path, "Main")
    finally:
        reader.close()


def _auth(site: Site) -> dict[str, str]:
    token = sandbox_token(site.sandbox, "blocks:read")
    return {"Authorization": f"Bearer {token}"}


async def test_a_probed_symmetric_type_is_pulled_edited_and_applied(site: Site) -> None:
    await site.pull()
    contact = (site.root / "pages/contact.yaml").read_text(encoding="utf-8")
    assert "keep: {type: callout" in contact
    state = site.workspace().load_state()
    assert state.site is not None
    assert not state.site.block_types

    site.sandbox.clear_stats()
    probed = await probe_block_type(site.workspace(), "callout")
    assert probed.verdict.symmetric, probed
    assert probed.verdict.fields == {"heading": "text", "body": "text", "buttonText": "text", "showIcon": "number"}
    assert probed.where == "page /contact"
    assert len(probed.steps) == 3, probed.steps  # added, written back, written with a text field changed
    by_route = site.sandbox.stats()["by_route"]
    assert by_route.get("POST /pages") == 1  # the scratch page, made once and recorded
    assert by_route.get("PUT /pages/{pageID}/{areaHandle}/{blockID}") == 2
    assert _blocks(site, "/contact")[1] == ("callout", CALLOUT)  # the block itself is never written
    state = site.workspace().load_state()
    assert state.site is not None
    assert state.site.block_types["callout"] == probed.verdict
    copy = int(re.search(r"block (\d+)", probed.steps[0]).group(1))  # type: ignore[union-attr]
    assert by_route.get("DELETE /blocks/{bID}") == 1  # the copy (one id: every write in one draft) deleted
    assert httpx.get(f"{site.sandbox.api_url}/blocks/{copy}", headers=_auth(site)).status_code == 404

    await site.pull()
    contact = (site.root / "pages/contact.yaml").read_text(encoding="utf-8")
    assert "keep:" not in contact
    assert "type: callout" in contact
    assert "raw: true" in contact
    assert "heading: Questions? Call us" in contact
    assert not (await site.plan()).actions

    site.edit("pages/contact.yaml", "heading: Questions? Call us", "heading: Talk to us")
    report = await site.apply()
    assert report.exit_code == 0, site.last_output
    assert _blocks(site, "/contact")[1] == ("callout", {**CALLOUT, "heading": "Talk to us"})
    assert "<h3>Talk to us</h3>" in httpx.get(site.sandbox.url + "/contact", timeout=30).text
    assert not (await site.plan()).actions


async def test_a_file_with_a_local_edit_takes_the_content_form_once_the_edit_is_applied(site: Site) -> None:
    await site.pull()
    site.edit("pages/contact.yaml", "<p>Write to us.</p>", "<p>Write to us today.</p>")
    assert (await probe_block_type(site.workspace(), "callout")).verdict.symmetric
    out = io.StringIO()
    assert await run_pull(site.root, out=out, overrides=site.overrides()) == 1, out.getvalue()
    contact = (site.root / "pages/contact.yaml").read_text(encoding="utf-8")
    assert "<p>Write to us today.</p>" in contact  # a file with a local edit is left as it is (pull's rule) ...
    assert "keep: {type: callout" in contact
    report = await site.apply()
    assert report.exit_code == 0, site.last_output
    await site.pull()  # ... until the edit is applied: then the placeholder becomes the content form
    contact = (site.root / "pages/contact.yaml").read_text(encoding="utf-8")
    assert "<p>Write to us today.</p>" in contact
    assert "keep:" not in contact
    assert "heading: Questions? Call us" in contact
    assert not (await site.plan()).actions
    assert _blocks(site, "/contact") == [("content", {"content": "<p>Write to us today.</p>"}), ("callout", CALLOUT)]


def test_an_asymmetric_type_stays_kept_with_the_sites_reason(
    site: Site, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(site.pull())
    set_sandbox_environment(monkeypatch, site.sandbox, site.state_path.parent)
    code = main(["probe-block-type", "countdown", str(site.root)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "countdown: does not round-trip" in out
    assert "the site refused to write the copy back unchanged" in out
    assert "Choose a time zone." in out
    verdict = site.workspace().load_state().site.block_types["countdown"]  # type: ignore[union-attr]
    assert not verdict.symmetric
    assert verdict.fields == {"title": "text", "endDate": "text"}

    pulled = asyncio.run(site.pull())
    launch = (site.root / "pages/launch.yaml").read_text(encoding="utf-8")
    assert "keep: {type: countdown" in launch
    assert "Choose a time zone." in pulled, pulled
    assert "cmssync probe-block-type countdown" in pulled, pulled


async def test_errors_say_what_and_where(site: Site) -> None:
    with pytest.raises(ConfigError, match=r"no gallery_pro block on the site: 3 pages and stacks read"):
        await probe_block_type(site.workspace(), "gallery_pro")
    with pytest.raises(ConfigError, match="content is a block type cmssync models"):
        await probe_block_type(site.workspace(), "content")
    content_id = _block_id(site, "/contact", 0)
    with pytest.raises(ConfigError, match=r"block \d+ is a content block, not callout"):
        await probe_block_type(site.workspace(), "callout", block_id=content_id)
    state = site.workspace().load_state()
    assert state.site is None or not state.site.block_types  # no verdict from a probe that could not run


def _block_id(site: Site, path: str, index: int) -> int:
    reader = RawSite(site.sandbox)
    try:
        page = reader.page_by_path(path)
    finally:
        reader.close()
    assert page is not None
    areas = page["areas"]["data"] if isinstance(page["areas"], dict) else page["areas"]
    blocks = next(a["blocks"] for a in areas if a["name"] == "Main")
    return int((blocks["data"] if isinstance(blocks, dict) else blocks)[index]["id"])
