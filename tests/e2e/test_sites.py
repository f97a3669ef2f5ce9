"""Several sites of one installation (issue 35 item 2): the sandbox installation has a second site ``second`` made as
a real 9.3.1 install makes it (``cmssync.emulator.sites``, recorded in ``sites.jsonl``): its own home (path ``""``),
pages whose paths repeat the default site's (``/about`` in both), and a page list that shows the site of the
request's host.

A content directory is one site: the default one unless ``site.handle`` (``--site``) names another. The default
site's pull on a two-site installation is byte for byte the pull of the same site alone; a second site's directory
takes that site's pages, plans empty after its pull, and its edits and new pages land in that site only; a handle no
site has, and a state recorded for another site, are refused by name.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from cmssync.cli import main as cli_main
from cmssync.commands.status import check_status
from cmssync.emulator.embedded import Sandbox
from cmssync.errors import ConfigError, StateError
from tests.support.multisite import SEED, host_of
from tests.support.sites import Site

ONE_SITE: dict[str, Any] = {key: value for key, value in SEED.items() if key != "sites"}


def _public(site: Site, path: str, *, second: bool) -> str:
    headers = {"host": host_of(site.sandbox.url)} if second else {}
    return httpx.get(site.sandbox.url + path, headers=headers, timeout=30).text


def _tree(root: Path) -> dict[str, bytes]:
    """Every file pull wrote, by path (the state is kept outside the directory)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


async def test_the_default_sites_pull_is_unchanged_by_a_second_site(sandbox_server: Sandbox, tmp_path: Path) -> None:
    alone = Site.seeded(sandbox_server, tmp_path, ONE_SITE, name="alone")
    assert "other sites" not in await alone.pull()
    two = Site.seeded(sandbox_server, tmp_path, SEED, name="two")
    summary = await two.pull()
    assert _tree(two.root) == _tree(alone.root)
    # the other site is named, not silently left out
    assert "note: the installation has other sites, not pulled here: second (each into its own content" in summary
    assert "Second Site" not in "".join(text.decode() for text in _tree(two.root).values())
    state = json.loads(two.state_path.read_text(encoding="utf-8"))
    assert "handle" not in state["site"]  # a default site's state reads as before


async def test_a_second_sites_directory_pulls_plans_and_applies_that_site(
    sandbox_server: Sandbox, tmp_path: Path
) -> None:
    site = Site.seeded(sandbox_server, tmp_path, SEED, handle="second")
    summary = await site.pull()
    pages = sorted(p.relative_to(site.root).as_posix() for p in (site.root / "pages").rglob("*.yaml"))
    assert pages == ["pages/about.yaml", "pages/contact.yaml", "pages/index.yaml"]
    assert "About of Second Site." in (site.root / "pages/about.yaml").read_text(encoding="utf-8")
    assert (site.root / "pages/index.yaml").read_text(encoding="utf-8").startswith("name: Second Site\n")
    assert "site second: its pages are this directory's" in summary
    assert not (site.root / "stacks").exists()  # the installation's: the default site's directory takes them
    assert "  handle: second\n" in (site.root / "cmssync.yaml").read_text(encoding="utf-8")
    assert json.loads(site.state_path.read_text(encoding="utf-8"))["site"]["handle"] == "second"
    plan = await site.plan()
    assert not plan.actions, [a.id for a in plan.actions]

    # an edit of the second site's /about lands there, not on the default site's /about
    site.edit("pages/about.yaml", "About of Second Site.", "About of Second Site, edited.")
    site.write(
        "pages/news.yaml",
        "name: News\nareas:\n  Main:\n    - type: content\n      value:\n        content: <p>Second news</p>\n",
    )
    report = await site.apply()
    assert report.exit_code == 0, site.last_output
    assert "About of Second Site, edited." in _public(site, "/about", second=True)
    assert "edited" not in _public(site, "/about", second=False)
    assert "Second news" in _public(site, "/news", second=True)
    assert "Second news" not in _public(site, "/news", second=False)
    assert not (await site.plan()).actions


async def test_a_handle_no_site_has_and_a_state_of_another_site_are_refused(
    sandbox_server: Sandbox, tmp_path: Path
) -> None:
    site = Site.seeded(sandbox_server, tmp_path, SEED, handle="third")
    with pytest.raises(ConfigError) as caught:
        await site.plan()
    message = str(caught.value)
    assert "site.handle third: the installation at" in message
    assert "(its sites: default, second)" in message
    assert "the REST API cannot create a site" in message

    default = Site.seeded(sandbox_server, tmp_path, SEED, name="default")
    await default.pull()
    default.handle = "second"  # the same directory and state, now pointed at the second site
    with pytest.raises(StateError, match="state was recorded for the default site of the installation, not site "):
        await default.plan()


async def test_status_lists_the_sites_and_names_this_one(sandbox_server: Sandbox, tmp_path: Path) -> None:
    site = Site.seeded(sandbox_server, tmp_path, SEED, handle="second")
    await site.pull()
    status = await check_status(site.root, overrides=site.overrides())
    assert status.ok, status.lines
    assert "site name: Second Site (site second, home page" in "\n".join(status.lines)
    assert (
        "sites:     default, second (this content); another one with --site HANDLE and its own content directory"
        in status.lines
    )


def test_the_site_flag_selects_the_site(
    sandbox_server: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = Site.seeded(sandbox_server, tmp_path, SEED)
    for name, value in {
        "CMSSYNC_URL": sandbox_server.url,
        "CMSSYNC_CLIENT_ID": sandbox_server.client_id,
        "CMSSYNC_CLIENT_SECRET": sandbox_server.client_secret,
        "CMSSYNC_USERNAME": sandbox_server.admin_username,
        "CMSSYNC_PASSWORD": sandbox_server.admin_password,
        "CMSSYNC_STATE": str(tmp_path / "flag-state.json"),
    }.items():
        monkeypatch.setenv(name, value)
    assert cli_main(["--site", "second", "pull", str(site.root)]) == 0
    assert "About of Second Site." in (site.root / "pages/about.yaml").read_text(encoding="utf-8")
    assert "CMSSYNC_SITE__HANDLE" not in os.environ  # the flag's variable is put back after the command
