"""Issue 26 on a real Concrete CMS 9.3.1 site (opt-in: see conftest.py for how to run it).

* A pull right after a pull (nothing changed) writes nothing and exits 0, and a pull after an apply of an edit
  keeps the edited file exactly as written.
* A page created with a type that has default blocks (``atomik_full``: a blog entry with the ``right_sidebar``
  template gets its type's breadcrumbs and page title in ``Page Header``, a share box, next/previous and topics in
  ``Sidebar``) is aligned with them: one title, not two, and the next plan is empty. The sandbox cannot be trusted
  to know a real type's defaults: the test reads them from the site.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml import YAML

from tests.realsite.harness import RawApi, Report, SiteAccess, page_files, run_cmssync


def snapshot(directory: Path) -> dict[str, str]:
    return {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def test_a_second_pull_writes_nothing(real_site: SiteAccess, content_dir: Path, report: Report) -> None:
    first = run_cmssync(real_site, content_dir, "pull")
    report.add("pull twice", first)
    assert first.code == 0, first.output
    before = snapshot(content_dir)
    second = run_cmssync(real_site, content_dir, "pull")
    report.add("pull twice", second)
    assert second.code == 0, second.output
    assert snapshot(content_dir) == before, second.output
    assert "local edits kept" not in second.output


@dataclass(frozen=True)
class TypedPage:
    """A page type with default blocks, as a page of it under ``parent`` with ``template`` gets them."""

    type: str
    template: str
    parent: str
    defaults: dict[str, list[str]]
    """Area → the block types a new page of the type gets there."""

    @property
    def title_area(self) -> str:
        """The area where the type places a page title (else its first area with blocks)."""
        return next((area for area, types in self.defaults.items() if "page_title" in types), next(iter(self.defaults)))


def a_type_with_default_blocks(api: RawApi, directory: Path) -> TypedPage:
    """Of the pulled pages' types (``atomik_full``: ``blog_entry`` with ``right_sidebar`` under ``/about/blog``), the
    first whose new page gets default blocks, a page title among them if any type places one; read by creating a
    page of it through the API (what a new page gets is the site's to say, not the sandbox's) and deleting it."""
    seen: set[tuple[str, str, str]] = set()
    found: list[TypedPage] = []
    tree = api.tree()
    for path, file in page_files(directory):
        data = YAML(typ="safe").load(file.read_text(encoding="utf-8"))
        parent = path.rsplit("/", 1)[0] or "/"
        key = (str(data.get("type") or ""), str(data.get("template") or ""), parent)
        if path == "/" or not all(key) or key in seen or key[0] == "page":
            continue
        seen.add(key)
        made = api.call(
            "POST", "/pages", json={"parent": tree[parent], "name": "cmssync probe", "type": key[0], "template": key[1]}
        )
        defaults: dict[str, list[str]] = {}
        for block in api.blocks(int(made["id"])):
            defaults.setdefault(block.area, []).append(block.type)
        api.call("DELETE", f"/pages/{made['id']}")
        if defaults:
            found.append(TypedPage(*key, defaults))
            if any("page_title" in types for types in defaults.values()):
                return found[-1]
    assert found, f"no type of the pulled pages places default blocks: {sorted(seen)}"
    return found[0]


def test_a_blog_entry_created_with_its_types_default_blocks_has_one_title(
    real_site: SiteAccess, api: RawApi, content_dir: Path, report: Report
) -> None:
    """A page created with a type that places default blocks (``atomik_full``: a blog entry gets breadcrumbs and a
    page title in ``Page Header``, a share box, next/previous and topics in ``Sidebar``) and whose content lists
    the title's area with one ``page_title`` is aligned with them: one title, not two; the areas its content does not
    list keep the type's blocks; the next plan is empty. The sandbox cannot be trusted to know a real type's
    defaults, so they are read from the site."""
    pull = run_cmssync(real_site, content_dir, "pull")
    report.add("type defaults", pull)
    assert pull.code == 0, pull.output
    typed = a_type_with_default_blocks(api, content_dir)
    title = typed.title_area
    areas = {title: [{"type": "page_title"}]}
    areas.setdefault("Main", []).append({"type": "content", "value": {"content": "<p>A post the content manages.</p>"}})
    entry = {"name": "A cmssync entry", "type": typed.type, "template": typed.template, "areas": areas}
    path = ("" if typed.parent == "/" else typed.parent) + "/cmssync-entry"
    (content_dir / "pages" / f"{path.strip('/')}.yaml").write_text(json.dumps(entry), encoding="utf-8")  # JSON is YAML
    apply = run_cmssync(real_site, content_dir, "apply", "--yes")
    report.add("type defaults", apply, type=typed.type, template=typed.template, defaults=typed.defaults)
    assert apply.code == 0, apply.output
    blocks = api.blocks(api.tree()[path])
    listed = {area: [str(block["type"]) for block in wanted] for area, wanted in areas.items()}
    for area, types in listed.items():
        assert [block.type for block in blocks if block.area == area] == types, (area, blocks)
    for area, types in typed.defaults.items():
        if area not in listed:  # areas the content does not list keep the type's blocks
            assert [block.type for block in blocks if block.area == area] == types, (area, blocks)
    plan = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode")
    report.add("type defaults", plan)
    assert plan.code == 0, plan.output
