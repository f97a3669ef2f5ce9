"""The drift feed sees every locale tree (issue 35): ``GET /pages`` lists the default tree only, so on a
multilingual site every ``TREE_EVERY``-th poll due for the page list reads one children list (or tree home) of the
other trees' managed pages instead — still one request a poll — and an editor's approved change to such a page
requests a drift run of exactly that page. The trees are what the daemon's last run found (``Plan.trees``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from cmssync.api.client import ConcreteClient
from cmssync.config import load_settings
from cmssync.daemon.feed import TREE_EVERY, DriftFeed
from cmssync.emulator.embedded import Sandbox
from cmssync.plan.scope_model import Scope
from tests.support.daemon import TOKEN_ROUTE
from tests.support.locale_trees import SEED
from tests.support.sites import Site
from tests.support.tokens import sandbox_token

SCOPES = "pages:read pages:areas:update_block pages:versions:read pages:versions:update"


@pytest.fixture
def site(sandbox_server: Sandbox, tmp_path: Path) -> Site:
    return Site.seeded(sandbox_server, tmp_path, SEED)


def _edit_and_approve(sandbox: Sandbox, page_id: int, text: str) -> None:
    """An editor's change: a block of the page updated, then the new version approved."""
    with httpx.Client(base_url=sandbox.api_url, timeout=30) as http:
        http.headers["authorization"] = "Bearer " + sandbox_token(sandbox, SCOPES)
        page = http.get(f"/pages/{page_id}", params={"includes": "areas"}).json()["data"]
        block = page["areas"]["data"][0]["blocks"]["data"][0]["id"]
        http.put(f"/pages/{page_id}/Main/{block}", json={"value": {"content": text}}).raise_for_status()
        versions = http.get(f"/page_versions/{page_id}").json()["data"]
        newest = max(int(v["id"]) for v in versions)
        http.put(f"/page_versions/{page_id}/{newest}", json={"is_approved": True}).raise_for_status()


def _api_requests(sandbox: Sandbox) -> int:
    return sum(e["count"] for e in sandbox.stats()["requests"] if e["route"] != TOKEN_ROUTE)


async def test_an_edit_in_another_tree_is_noticed_for_one_request_a_poll(site: Site) -> None:
    await site.pull()
    settings = load_settings(site.root, overrides=site.overrides())
    requested: list[tuple[str, Scope | None]] = []
    async with ConcreteClient.from_settings(settings, base_dir=site.root) as client:
        feed = DriftFeed(client, lambda t, s: requested.append((t, s)), interval=0)
        state = site.workspace().load_state()
        feed.after_run([], state, trees={"/": "en_US", "/de": "de_DE"})  # what the startup run found
        site.sandbox.clear_stats()
        kinds: list[str] = []
        for _ in range(3 * TREE_EVERY):  # the /de tree's 3 sources (home, its and /de/about's children) read once
            kinds.append((await feed.poll()).kind)
        assert _api_requests(site.sandbox) == len(kinds)  # one request a poll
        assert "page:de_DE" in kinds
        assert "page" in kinds
        assert requested == []
        _edit_and_approve(site.sandbox, state.pages["/de/about/team"].id, "<p>Vom Redakteur</p>")
        results: list[Any] = [await feed.poll() for _ in range(3 * TREE_EVERY)]
    moved = [r for r in results if r.managed]
    assert [(r.kind, r.managed) for r in moved] == [("page:de_DE", ["/de/about/team"])]
    assert requested == [("drift", Scope(pages=frozenset({"/de/about/team"})))]


async def test_a_single_locale_site_never_gives_the_tree_watch_a_turn(sandbox_server: Sandbox, tmp_path: Path) -> None:
    site = Site.seeded(sandbox_server, tmp_path, {k: v for k, v in SEED.items() if k != "locales"})
    await site.pull()
    settings = load_settings(site.root, overrides=site.overrides())
    async with ConcreteClient.from_settings(settings, base_dir=site.root) as client:
        feed = DriftFeed(client, lambda t, s: None, interval=0)
        feed.after_run([], site.workspace().load_state(), trees={})  # a single-locale site's plan names no trees
        kinds = {(await feed.poll()).kind for _ in range(2 * TREE_EVERY)}
    assert kinds <= {"page", "stack", "file"}
