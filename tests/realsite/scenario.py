"""Issue 14's "Done when" scenario, for any site reachable over HTTP (the real site, or the sandbox in CI).

1. :func:`seed_editor_content` adds what an editor adds through the API on an ``atomik_full`` site: content blocks
   with a page link ``{CCM:CID_n}``, download links ``{CCM:FID_DL_n}`` (numeric, and a lower-case UUID as 9.x
   editors insert), pictures ``<concrete-picture fID="n" />`` (numeric and UUID), and an ``image`` block; each page
   is published.
2. :func:`observe` records what the site shows: the page tree, every page's blocks (API) and every public page's
   links and images (guest HTML).
3. ``pull`` → ``plan`` (must be empty) → :func:`edit_one_block_per_page` → ``apply`` → ``plan`` (must be empty).
4. :func:`compare` lists every way the site after differs from the site before other than the edits: a link or
   image that now resolves elsewhere, a block lost, gained, moved or rewritten, an edit that is not visible.

The result is a list of findings (empty = the scenario passed), so one run reports every problem at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from ruamel.yaml import YAML

from tests.realsite.harness import (
    Block,
    CommandRun,
    PublicPage,
    PublicSite,
    RawApi,
    SiteAccess,
    link_differences,
    page_files,
    run_cmssync,
)

DROPPED_WORD_PAGE = "/about/blog/freshen-up-your-website"
"""An ``atomik_full`` page whose handle holds a word (``up``) Concrete drops only from *generated* URLs."""
ATOMIK_PAGES = ("/privacy-policy", "/subscribe-thanks", "/search")
"""The pages :func:`editor_pages` takes on the ``atomik_full`` sample (as its sandbox twin has them)."""
LINK_TEXT = "the thanks page"
EDIT_KINDS = ("content", "hero_image", "page_title")
"""The block types :func:`edit_one_block_per_page` edits, in the order it looks for them."""
PLAIN_TYPES = frozenset({"content", "page_title", "horizontal_rule", "search", "html"})
"""Block types a page re-created by ``apply --replace-moved`` is written with in full (no ``keep:`` placeholder)."""

PICTURES = (".jpg", ".jpeg", ".png", ".webp", ".gif", ".svg")
UNTOUCHABLE_TYPES = frozenset({"core_area_layout", "core_container", "gallery"})
"""Block types the issue names: pages holding them must come through untouched."""


@dataclass
class Seeded:
    pages: dict[str, str] = field(default_factory=dict)
    """Page path → what was added there (for messages)."""
    linked: str = "/"
    """The page the editor's link names (:attr:`EditorPages.linked`)."""
    source: str = "/"
    """The page holding that link (:attr:`EditorPages.source`)."""


@dataclass(frozen=True)
class EditorPages:
    """Where :func:`seed_editor_content` puts an editor's links, pictures and image block."""

    source: str
    """Gets a content block with a page link to ``linked``, a numeric download link and a numeric picture."""
    linked: str
    """The page the editor's link names, a plain one (the move scenario re-creates it under another parent); gets a
    content block with a link home, a download link by UUID and a picture by UUID."""
    image: str
    """Gets an ``image`` block."""


def editor_pages(api: RawApi, tree: dict[str, int]) -> EditorPages:
    """The ``atomik_full`` pages where it has them, else chosen on the site in general among the pages without
    children that have blocks in ``Main``: ``linked`` the plainest (fewest blocks, all of :data:`PLAIN_TYPES`),
    ``source`` first one with nothing :func:`edit_one_block_per_page` could edit (``/search`` on ``elemental_full``:
    the editor's block gives it one), ``image`` another."""
    if all(path in tree for path in ATOMIK_PAGES):
        return EditorPages(*ATOMIK_PAGES)
    parents = {path.rsplit("/", 1)[0] or "/" for path in tree if path != "/"}
    leaves = sorted(path for path in tree if path != "/" and path not in parents)
    blocks = {path: api.blocks(tree[path]) for path in leaves}
    in_main = [path for path in leaves if any(block.area == "Main" for block in blocks[path])]

    def plain(path: str) -> bool:
        return all(block.type in PLAIN_TYPES for block in blocks[path])

    def editable(path: str) -> bool:
        return any(block.type in EDIT_KINDS for block in blocks[path])

    linked = min((path for path in in_main if plain(path)), key=lambda path: (len(blocks[path]), path), default=None)
    assert linked is not None, f"no page without children holds only blocks of {sorted(PLAIN_TYPES)} in Main"
    others = sorted((path for path in in_main if path != linked), key=lambda path: (editable(path), path))
    assert len(others) >= 2, f"the site has too few pages with blocks in Main: {in_main}"
    return EditorPages(source=others[0], linked=linked, image=others[1])


def seed_editor_content(api: RawApi) -> Seeded:
    """Links, download links, pictures and an image block, as an editor adds them (stored form), on the
    :func:`editor_pages`; the download links name a PDF (another file on a site without one: a picture on
    ``elemental_full``, the last by URL, so that it is not the picture the links show too)."""
    tree = api.tree()
    numeric = api.site.numeric_file_ids()
    files = sorted(
        (item for item in api.files() if str(item["id"]).lower() in numeric), key=lambda f: str(f.get("url"))
    )

    def pick(*suffixes: str, other: bool = False) -> dict[str, Any]:
        for suffix in suffixes:
            for item in files:
                if str(item.get("url", "")).split("?")[0].lower().endswith(suffix):
                    return item
        if other and files:  # a download link to a picture when the site has no other file (elemental_full)
            plain = [f for f in files if not str(f.get("url", "")).split("?")[0].lower().endswith(PICTURES)]
            return (plain or files)[-1]
        raise AssertionError(f"the site has no {' or '.join(suffixes)} file with a known numeric id")

    document, picture = pick(".pdf", other=True), pick(".jpg", *PICTURES)
    doc_uuid, pic_uuid = str(document["id"]).lower(), str(picture["id"]).lower()
    doc_n, pic_n = numeric[doc_uuid], numeric[pic_uuid]
    pages = editor_pages(api, tree)
    target = pages.linked
    seeded = Seeded()
    additions = {
        pages.source: (
            "Main",
            "content",
            {
                "content": (
                    f'<p>Editor links: <a href="{{CCM:CID_{tree[target]}}}">{LINK_TEXT}</a> and '
                    f'<a href="{{CCM:FID_DL_{doc_n}}}">the brochure</a>.</p>\n'
                    f'<p><concrete-picture fID="{pic_n}" alt="A numeric picture" /></p>'
                )
            },
        ),
        pages.linked: (
            "Main",
            "content",
            {
                "content": (
                    f'<p>Back <a href="{{CCM:CID_1}}">home</a>, or <a href="{{CCM:FID_DL_{doc_uuid}}}">download '
                    f'the brochure</a>.</p>\n<p><concrete-picture fID="{pic_uuid}" alt="A UUID picture" /></p>'
                )
            },
        ),
        pages.image: ("Main", "image", {"fID": str(pic_n), "altText": "An editor's image"}),
    }
    for path, (area, block_type, value) in additions.items():
        if path not in tree:
            continue
        api.add_block(tree[path], area, block_type, value)
        api.approve(tree[path])
        seeded.pages[path] = f"{block_type} in {area}"
    seeded.linked, seeded.source = pages.linked, pages.source
    return seeded


@dataclass
class SiteView:
    tree: dict[str, int]
    blocks: dict[str, list[Block]]
    public: dict[str, PublicPage]


def observe(api: RawApi, public: PublicSite) -> SiteView:
    tree = api.tree()
    return SiteView(
        tree=tree,
        blocks={path: api.blocks(page_id) for path, page_id in tree.items()},
        public={path: public.page(path) for path in tree},
    )


REREADS = 6
"""Public reads of a page whose links changed across an apply, to tell a lost (or gained) link from a rotating one."""


def settle_unstable(
    unstable: dict[str, set[tuple[str, str, str]]], before: SiteView, after: SiteView, public: PublicSite
) -> dict[str, set[tuple[str, str, str]]]:
    """``unstable`` plus what reading again the public pages whose links changed across the apply shows: a changed
    link whose count differs between those reads, or that one of them shows as before, rotates by itself (the sample
    site's blog page shows one entry's thumbnail once or twice, and another's or not, from one render to the next,
    with nothing changed). Two reads before the apply catch such a list only when they happen to differ; a link
    lost (or gained) in every read is still a finding."""
    settled = {path: set(links) for path, links in unstable.items()}
    for path, old in before.public.items():
        new = after.public.get(path)
        if new is None:
            continue
        changed = _changed_links(old, new)
        if not changed:
            continue
        rereads = [public.page(path).links for _ in range(REREADS)]
        rotating = {
            key
            for key in changed
            if len({new.links[key], *(read[key] for read in rereads)}) > 1
            or any(read[key] == old.links[key] for read in rereads)
        }
        if rotating:
            settled.setdefault(path, set()).update(rotating)
    return settled


def _changed_links(old: PublicPage, new: PublicPage) -> set[tuple[str, str, str]]:
    """The links a page shows a different number of times in ``new`` than in ``old`` (gained, lost, or shown once
    more or less)."""
    return {key for key in set(old.links) | set(new.links) if old.links[key] != new.links[key]}


def unstable_links(first: SiteView, second: SiteView) -> dict[str, set[tuple[str, str, str]]]:
    """Links that differ between two reads of an unchanged site (rotating lists, tokens): not compared."""
    result: dict[str, set[tuple[str, str, str]]] = {}
    for path, page in first.public.items():
        other = second.public.get(path)
        if other is not None:
            changed = set((page.links - other.links) + (other.links - page.links))
            if changed:
                result[path] = changed
    return result


# --- editing ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Edit:
    path: str
    area: str
    position: int
    type: str
    marker: str


def _marker(path: str) -> str:
    name = "home" if path == "/" else PurePosixPath(path).name
    return f"Realsite edit of {name}"


def edit_one_block_per_page(directory: Path) -> dict[str, Edit]:
    """Change the text of one block on every page file a pull wrote, the way a user edits YAML.

    The first ``content`` block of a top-level area gets a paragraph appended; a page without one gets its
    ``hero_image`` title changed (the issue's lost-image case), else its ``page_title`` made custom. Opaque
    placeholders and raw blocks other than ``hero_image`` are never edited.
    """
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    edits: dict[str, Edit] = {}
    for path, file in page_files(directory):
        document = yaml.load(file.read_text(encoding="utf-8"))
        edit = _edit_document(path, document)
        if edit is None:
            continue
        with file.open("w", encoding="utf-8") as stream:
            yaml.dump(document, stream)
        edits[path] = edit
    return edits


def _edit_document(path: str, document: Any) -> Edit | None:
    areas = document.get("areas") if isinstance(document, dict) else None
    if not isinstance(areas, dict):
        return None
    marker = _marker(path)
    for kind in EDIT_KINDS:
        candidates = [
            (area, position, block)
            for area, blocks in areas.items()
            if " : " not in str(area) and isinstance(blocks, list)
            for position, block in enumerate(blocks)
        ]
        # The content block holding the most links and pictures first: the editor's links are what must survive.
        candidates.sort(key=lambda candidate: -_references(candidate[2]) if kind == "content" else 0)
        for area, position, block in candidates:
            if not isinstance(block, dict) or block.get("type") != kind:
                continue
            value = block.get("value")
            if kind == "content" and isinstance(value, dict) and isinstance(value.get("content"), str):
                value["content"] = value["content"].rstrip("\n") + f"\n<p>{marker}</p>\n"
            elif kind == "hero_image" and isinstance(value, dict) and "title" in value:
                value["title"] = marker
            elif kind == "page_title" and (value is None or isinstance(value, dict)):
                value = value if value is not None else {}
                value["useCustomTitle"] = True
                value["titleText"] = marker
                block["value"] = value
            else:
                continue
            return Edit(path, str(area), position, kind, marker)
    return None


def _references(block: Any) -> int:
    value = block.get("value") if isinstance(block, dict) else None
    text = str(value.get("content", "")) if isinstance(value, dict) else ""
    return sum(text.count(mark) for mark in ("href=", "<concrete-picture", "{ccm:", "${"))


# --- comparing ----------------------------------------------------------------------------------------------------


def compare(
    before: SiteView,
    after: SiteView,
    edits: dict[str, Edit],
    unstable: dict[str, set[tuple[str, str, str]]],
) -> list[str]:
    """Every difference between the two views that the edits do not explain (empty: the site came through)."""
    findings: list[str] = []
    if set(before.tree) != set(after.tree):
        lost, gained = sorted(set(before.tree) - set(after.tree)), sorted(set(after.tree) - set(before.tree))
        findings.append(f"pages lost {lost}, gained {gained}")
    for path in sorted(before.tree):
        if path not in after.tree:
            continue
        differences = _block_differences(before.blocks[path], after.blocks[path], edits.get(path))
        findings += [f"{path}: {line}" for line in differences]
        old, new = before.public[path], after.public[path]
        if old.status != new.status:
            findings.append(f"{path}: public page answered {old.status} before, {new.status} after")
        skip = unstable.get(path, set())
        if _lists_pages(before.blocks[path]):
            skip = skip | _listed_entries(old, new, before, after)
        for line in link_differences(_without(old, skip), _without(new, skip)):
            findings.append(f"{path}: public page {line}")
        edit = edits.get(path)
        if edit is not None and edit.marker not in new.html:
            findings.append(f"{path}: the edit of its {edit.type} block ({edit.area}) is not on the public page")
    return findings


LISTING_TYPES = frozenset({"page_list", "blog_entry_list"})
"""Blocks that list other pages by date: publishing the edited pages legitimately changes which ones they show."""
THUMBNAILS = "/application/files/thumbnails/"


def _lists_pages(blocks: list[Block]) -> bool:
    return any(block.type in LISTING_TYPES for block in blocks)


def _listed_entries(old: PublicPage, new: PublicPage, before: SiteView, after: SiteView) -> set[tuple[str, str, str]]:
    """On a page with a page list, the entries that came or went: links to pages that exist before and after, and
    list thumbnails. A list sorted by date shows other pages once the edited ones are published again; a broken
    link (a page that is gone, an export string, a file) is still a finding. An entry shown once more or once less
    (the same link's count changed: a list on the page of one of its own entries) is an entry that came or went."""
    pages = {path for path in before.tree if path in after.tree}
    changed = _changed_links(old, new)
    return {
        (tag, attribute, url)
        for tag, attribute, url in changed
        if (tag == "a" and _site_path(url) in pages) or (tag == "img" and THUMBNAILS in url)
    }


def _site_path(url: str) -> str:
    path = urlsplit(url).path.rstrip("/")
    return path or "/"


def _without(page: PublicPage, skip: set[tuple[str, str, str]]) -> PublicPage:
    kept = PublicPage(page.status, text=page.text, html=page.html)
    kept.links.update({key: count for key, count in page.links.items() if key not in skip})
    return kept


def _block_differences(before: list[Block], after: list[Block], edit: Edit | None) -> list[str]:
    findings: list[str] = []
    old = {(b.area, b.position): b for b in before}
    new = {(b.area, b.position): b for b in after}
    for key in sorted(set(old) | set(new)):
        was, now = old.get(key), new.get(key)
        where = f"{key[0]}[{key[1]}]"
        if was is None and now is not None:
            findings.append(f"block gained at {where}: {now.type} {now.id}")
            continue
        if now is None and was is not None:
            findings.append(f"block lost at {where}: {was.type} {was.id}")
            continue
        assert was is not None
        assert now is not None
        if was.type != now.type:
            findings.append(f"block at {where} was {was.type} {was.id}, is {now.type} {now.id}")
            continue
        if edit is not None and (edit.area, edit.position) == key and edit.marker in json.dumps(now.value):
            findings += [f"edited block at {where} {was.type}: {line}" for line in _edit_side_effects(edit, was, now)]
            continue
        if was.id != now.id:
            label = " (layout/container/gallery)" if was.type in UNTOUCHABLE_TYPES else ""
            findings.append(f"block at {where}{label} re-created: {was.type} id {was.id} → {now.id}")
        if was.value != now.value:
            findings.append(f"block at {where} {was.type} value changed: {_diff(was.value, now.value)}")
    return findings


EDITED_FIELDS = {"content": {"content"}, "hero_image": {"title"}, "page_title": {"useCustomTitle", "titleText"}}


def _edit_side_effects(edit: Edit, was: Block, now: Block) -> list[str]:
    """What changed in an edited block besides the edit (the issue's hero image losing its file)."""
    if not isinstance(was.value, dict) or not isinstance(now.value, dict):
        return [f"value {_short(was.value)} → {_short(now.value)}"]
    findings = [
        f"{key} changed too: {_short(was.value.get(key))} → {_short(now.value.get(key))}"
        for key in sorted(set(was.value) | set(now.value))
        if key not in EDITED_FIELDS[edit.type] and was.value.get(key) != now.value.get(key)
    ]
    if edit.type == "content":
        old = " ".join(str(was.value.get("content", "")).split())
        new = " ".join(str(now.value.get("content", "")).replace(f"<p>{edit.marker}</p>", "").split())
        if old != new:
            findings.append(f"content changed beyond the edit: {_short(old)} → {_short(new)}")
    return findings


def _diff(before: Any, after: Any) -> str:
    if isinstance(before, dict) and isinstance(after, dict):
        keys = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        return "; ".join(f"{k}: {_short(before.get(k))} → {_short(after.get(k))}" for k in keys[:4])
    return f"{_short(before)} → {_short(after)}"


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 160 else text[:157] + "..."


# --- the whole scenario -------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    runs: dict[str, CommandRun]
    edits: dict[str, Edit]
    findings: list[str]
    pages: int
    blocks_before: int
    blocks_after: int
    links_compared: int
    unstable_links: int


def done_when(site: SiteAccess, api: RawApi, public: PublicSite, directory: Path) -> Outcome:
    """Seed, observe, pull, plan, edit, apply, observe, plan; every finding, not only the first."""
    seed_editor_content(api)
    before = observe(api, public)
    unstable = unstable_links(before, observe(api, public))
    runs: dict[str, CommandRun] = {}
    findings: list[str] = []
    runs["pull"] = run_cmssync(site, directory, "pull")
    if runs["pull"].code != 0:
        findings.append(f"pull failed: {runs['pull'].output[-2000:]}")
        return Outcome(runs, {}, findings, len(before.tree), _count(before), _count(before), _links(before), 0)
    missing = sorted(set(before.tree) - {path for path, _ in page_files(directory)})
    if missing:
        findings.append(f"pull did not write {missing}: {_skips(runs['pull'].output, missing)}")
    runs["plan after pull"] = run_cmssync(site, directory, "plan", "--detailed-exitcode")
    if runs["plan after pull"].code != 0:
        findings.append(f"the plan right after pull is not empty:\n{runs['plan after pull'].output[-3000:]}")
    edits = edit_one_block_per_page(directory)
    unedited = sorted(set(before.tree) - set(edits))
    if unedited:
        findings.append(f"pages with no editable content/hero_image/page_title block in the pulled files: {unedited}")
    runs["apply"] = run_cmssync(site, directory, "apply", "--yes")
    if runs["apply"].code != 0:
        findings.append(f"apply failed (exit {runs['apply'].code}):\n{runs['apply'].output[-3000:]}")
    after = observe(api, public)
    unstable = settle_unstable(unstable, before, after, public)
    findings += compare(before, after, edits, unstable)
    runs["plan after apply"] = run_cmssync(site, directory, "plan", "--detailed-exitcode")
    if runs["plan after apply"].code != 0:
        findings.append(f"the plan after apply is not empty:\n{runs['plan after apply'].output[-3000:]}")
    return Outcome(
        runs=runs,
        edits=edits,
        findings=findings,
        pages=len(before.tree),
        blocks_before=_count(before),
        blocks_after=_count(after),
        links_compared=_links(before),
        unstable_links=sum(len(links) for links in unstable.values()),
    )


def _count(view: SiteView) -> int:
    return sum(len(blocks) for blocks in view.blocks.values())


def _links(view: SiteView) -> int:
    return sum(sum(page.links.values()) for page in view.public.values())


def _skips(output: str, paths: list[str]) -> str:
    lines = [line for line in output.splitlines() if any(path in line for path in paths)]
    return "; ".join(lines[:5]) or "no reason given"
