"""Pages of a type with default blocks (issue 26 item 6): Concrete places the type's blocks on every new page (a
blog entry's ``page_title``); a created (or re-created) page is aligned with them — one title, not two — and the
next plan is empty."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from cmssync.emulator.embedded import Sandbox
from cmssync.emulator.seeds import DEFAULT_SEED
from tests.support.rawsite import RawSite
from tests.support.sites import Site

POST = """name: A post
type: blog_entry
template: full
areas:
  Main:
    - type: page_title
      value: {formatting: h2}
    - type: content
      value:
        content: <p>The post.</p>
"""


def with_blog_entry_defaults(tmp_path: Path) -> str:
    """The default seed plus the blog entry type's defaults page (for the full template): a page title in Main."""
    seed = copy.deepcopy(DEFAULT_SEED)
    seed["pages"].append(
        {
            "path": None,
            "id": 900,
            "name": "",
            "type": "blog_entry",
            "template": "full",
            "areas": {"Main": [{"type": "page_title", "value": {"useCustomTitle": "0", "formatting": "h1"}}]},
        }
    )
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(seed))
    return str(path)


def titles(raw: RawSite, path: str) -> list[str]:
    return [block_type for block_type, _ in raw.blocks(path, "Main") if block_type == "page_title"]


async def test_created_pages_align_with_the_types_defaults(tmp_path: Path, sandbox: Sandbox) -> None:
    sandbox.reset(seed=with_blog_entry_defaults(tmp_path))
    raw = RawSite(sandbox)  # after the reset, which revokes every token
    root = tmp_path / "site"
    root.mkdir()
    site = Site(root, sandbox)
    site.write("pages/blog.yaml", "name: Blog\n")
    site.write("pages/blog/first-post.yaml", POST)
    report = await site.apply()
    assert not report.failed, site.last_output
    assert titles(raw, "/blog/first-post") == ["page_title"]
    assert [t for t, _ in raw.blocks("/blog/first-post", "Main")] == ["page_title", "content"]
    assert raw.blocks("/blog/first-post", "Main")[0][1]["formatting"] == "h2"
    assert (await site.plan()).actions == ()

    # a second post of the type: the defaults page's block is placed on it too, and updated there alone
    site.write("pages/blog/second-post.yaml", POST.replace("The post.", "Another post."))
    report = await site.apply()
    assert not report.failed, site.last_output
    assert [t for t, _ in raw.blocks("/blog/second-post", "Main")] == ["page_title", "content"]
    assert [t for t, _ in raw.blocks("/blog/first-post", "Main")] == ["page_title", "content"]
    plan = await site.plan()
    assert plan.actions == (), [(a.key, a.op, a.blocks) for a in plan.actions]
    raw.close()
