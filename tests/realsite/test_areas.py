"""Issue 25 items 1 and 3 on a real Concrete CMS 9.3.1 site (opt-in: see conftest.py for how to run it).

* Sub-areas: a content block inside a container or layout (``Main : 10 : Title``), pulled from a fresh
  ``atomik_full`` site, edited in its YAML and applied, shows on the public page; the page keeps its other blocks;
  the next plan is empty.
* Stacks: the content of the stack the most public pages show (``atomik_full``: a footer column,
  ``stacks/footer-column-N.yaml``) edited in its YAML and applied shows on every public page that showed it; the next
  plan is empty.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from tests.realsite.harness import PublicSite, RawApi, Report, SiteAccess, page_files, run_cmssync, shown_stacks


def _round_trip() -> YAML:
    yaml = YAML()
    yaml.width = 4096
    return yaml


def _append_marker(blocks: list[Any], marker: str) -> bool:
    """Append a paragraph to the first content block of ``blocks``; whether there was one."""
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "content" and isinstance(block.get("value"), dict):
            block["value"]["content"] = str(block["value"]["content"]) + f"<p>{marker}</p>"
            return True
    return False


def test_a_sub_area_block_is_pulled_edited_applied_and_shown(
    real_site: SiteAccess, api: RawApi, public: PublicSite, content_dir: Path, report: Report
) -> None:
    pull = run_cmssync(real_site, content_dir, "pull")
    report.add("sub-areas", pull)
    assert pull.code == 0, pull.output
    marker = f"subarea-edit-{secrets.token_hex(3)}"
    yaml = _round_trip()
    edited = None
    for path, file in page_files(content_dir):
        data = yaml.load(file.read_text(encoding="utf-8"))
        names = [name for name in (data.get("areas") or {}) if " : " in name]
        if any(_append_marker(data["areas"][name], marker) for name in names):
            with file.open("w", encoding="utf-8") as stream:
                yaml.dump(data, stream)
            edited = path
            break
    assert edited is not None, "no content block in any sub-area of the pulled site"
    tree = api.tree()
    blocks_before = len(api.blocks(tree[edited]))
    assert public.page(edited).html.count(marker) == 0

    apply = run_cmssync(real_site, content_dir, "apply", "--yes")
    report.add("sub-areas", apply, page=edited)
    assert apply.code == 0, apply.output
    assert public.page(edited).html.count(marker) == 1
    assert len(api.blocks(tree[edited])) == blocks_before
    plan = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode")
    report.add("sub-areas", plan)
    assert plan.code == 0, plan.output


def test_a_footer_column_edit_shows_on_every_page_that_renders_the_footer(
    real_site: SiteAccess, api: RawApi, public: PublicSite, content_dir: Path, report: Report
) -> None:
    """The stack the most public pages show (``atomik_full``: a footer column, on every page that renders the
    footer; ``elemental_full``: the footer's contact details), found by its text on the public pages."""
    pull = run_cmssync(real_site, content_dir, "pull")
    report.add("stacks", pull)
    assert pull.code == 0, pull.output
    pages = sorted(api.tree())
    stacks = shown_stacks(content_dir, public, pages)
    assert stacks, f"no pulled stack's content shows on a public page: {pull.output}"
    stack = stacks[0]
    assert len(stack.pages) >= len(pages) // 2, f"{stack.file.name} shows on {len(stack.pages)} of {len(pages)} pages"
    marker = f"footer-edit-{secrets.token_hex(3)}"
    yaml = _round_trip()
    data = yaml.load(stack.file.read_text(encoding="utf-8"))
    assert _append_marker(data["areas"]["Main"], marker)
    with stack.file.open("w", encoding="utf-8") as stream:
        yaml.dump(data, stream)

    apply = run_cmssync(real_site, content_dir, "apply", "--yes")
    report.add("stacks", apply, stack=stack.file.name)
    assert apply.code == 0, apply.output
    # on a multilingual site the pages of a tree that has its own version of the stack render that version (which
    # tree a version is for is not in the API): the edit must show on the default tree's pages, and on all when the
    # stack has no localized version
    localized = list((stack.file.parent / stack.file.stem).glob("*.yaml"))
    expected = stack.pages & set(api.tree(default_only=True)) if localized else stack.pages
    shown = {path for path in stack.pages if marker in public.page(path).html}
    report.note(
        "stacks",
        f"the edit of {stack.file.name} shows on {len(shown)} of the {len(stack.pages)} pages that showed it "
        f"({len(pages)} pages; {len(localized)} localized versions)",
    )
    assert not expected - shown, sorted(expected - shown)
    plan = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode")
    report.add("stacks", plan)
    assert plan.code == 0, plan.output
