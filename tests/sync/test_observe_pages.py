"""How the page tree is read (``cmssync.sync.observe_pages``), against the sandbox: what each page's view holds."""

from __future__ import annotations

from pathlib import Path

from cmssync.emulator.embedded import Sandbox
from cmssync.sync.planning import make_plan
from tests.support.sites import Site

HOME = """name: Home
areas:
  Main:
    - type: content
      value:
        content: <p>Welcome.</p>
"""


async def test_an_unmanaged_home_page_is_read_only_as_the_parent_of_top_level_pages(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    sandbox.reset(seed="empty")
    site = Site(tmp_path / "site", sandbox)
    site.write("pages/index.yaml", HOME)
    site.write("pages/about.yaml", "name: About\n")
    assert (await site.apply()).exit_code == 0

    managed = await make_plan(site.workspace())
    assert managed.plan.actions == ()
    home = managed.snapshot.pages["/"]
    assert [block.value["content"] for block in home.blocks("Main")] == ["<p>Welcome.</p>"]
    assert not home.batched  # read on its own, in its recent version

    # "/" no longer managed: neither the content nor the state names it
    (site.root / "pages" / "index.yaml").unlink()
    store = site.workspace().store
    state = store.load()
    state.forget_page("/")
    store.save(state)
    sandbox.clear_stats()
    unmanaged = await make_plan(site.workspace())
    assert unmanaged.plan.actions == ()
    home = unmanaged.snapshot.pages["/"]
    assert home.id == managed.snapshot.pages["/"].id
    assert home.areas == {}  # not read: the page matters only as /about's parent
    assert home.batched  # a partial view: plan_site reads a page in full before planning a write to it
    assert unmanaged.snapshot.pages["/about"].batched  # from home's children list, as before
    assert sandbox.stats()["by_route"].get("GET /pages/{pageID}") == 1  # the home page, still read once
