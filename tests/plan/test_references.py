"""Link translation both ways (``cmssync.plan.references`` and the resolver modes of ``cmssync.plan.desired``).

A small model of Concrete stands in for the server here (it follows blocks.jsonl: ``LinkAbstractor::export`` reads a
download link by the leading digits of what was stored, renders it as stored; a picture exports by number and
renders by UUID when it is one). The property test checks, for generated pages, files and links: the stored form
cmssync writes → the server's export and rendering → ``pull``'s references → the stored form again is the identity,
and the planner's comparison form of the references equals the server's read of the stored form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cmssync.content.text import Text
from cmssync.plan.desired import Resolver
from cmssync.plan.normalize import normalize_block_value
from cmssync.plan.references import (
    _NAME_TO_LOWER,
    Lossy,
    Rendered,
    canonical_content,
    column_to_reference,
    export_name,
    file_numbers_from_probe,
    html_to_references,
    lower_case_names,
    probe_html,
    rendered_blocks,
    rendered_in_order,
    same_picture,
)

BASE = "http://site.test"
CONTENT_WRAPPER = '<div class="ccm-block-content">'
"""How the atomik theme's view of a content block starts (its ``rendered_wrapper``; Concrete's own has none)."""


@dataclass(frozen=True)
class FakeFile:
    number: int
    uuid: str
    prefix: str
    name: str

    @property
    def path(self) -> str:
        return f"docs/{self.name}"

    @property
    def url(self) -> str:
        p = self.prefix
        return f"{BASE}/application/files/{p[:4]}/{p[4:8]}/{p[8:]}/{self.name}"


class FakeConcrete:
    """What the real server does with a content value (blocks.jsonl ``links.*``), for the pieces used here."""

    def __init__(self, pages: dict[str, int], files: list[FakeFile]) -> None:
        self.pages = pages
        self.paths = {page_id: path for path, page_id in pages.items()}
        self.files = files

    def _by_number(self, text: str) -> FakeFile | None:
        digits = re.match(r"\d+", text)
        return next((f for f in self.files if digits and f.number == int(digits.group(0))), None)

    def save(self, html: str) -> str:
        return re.sub(r"<concrete-picture fID=", "<concrete-picture fid=", html)

    def export(self, stored: str) -> str:
        def page(m: re.Match[str]) -> str:
            path = self.paths.get(int(m.group(1)))
            return "{ccm:export:page:" + ("" if path in (None, "/") else path) + "}"

        def download(m: re.Match[str]) -> str:
            found = self._by_number(m.group(1))
            return "" if found is None else f"{{ccm:export:file:{found.prefix}:{found.name}}}"

        def picture(m: re.Match[str]) -> str:
            found = self._by_number(m.group(1))
            assert found is not None
            return f'<concrete-picture{m.group(2)} file="{found.prefix}:{found.name}"{m.group(3)}'

        text = re.sub(r"\{CCM:CID_(\d+)\}", page, stored)
        text = re.sub(r"\{CCM:FID_DL_([^}]*)\}", download, text)
        return re.sub(r'<concrete-picture fid="([^"]*)"([^>]*?)(\s*/>)', picture, text)

    def render(self, stored: str) -> str:
        text = re.sub(r"\{CCM:FID_DL_([^}]*)\}", lambda m: f"{BASE}/download_file/view/{m.group(1)}/7", stored)

        def picture(m: re.Match[str]) -> str:
            found = next((f for f in self.files if f.uuid == m.group(1)), None) or self._by_number(m.group(1))
            assert found is not None
            src = found.url.removeprefix(BASE)
            return f'<picture><img src="{src}" alt=""></picture>'

        text = re.sub(r'<concrete-picture fid="([^"]*)"[^>]*?/>', picture, text)
        return "\n" + CONTENT_WRAPPER + text + "</div>\n"


def resolver(concrete: FakeConcrete, *, mode: str, numbers: bool = True) -> Resolver:
    return Resolver(
        file_urls={f.path: f.url for f in concrete.files},
        file_ids={f.path: f.uuid for f in concrete.files},
        page_ids=concrete.pages,
        strict=mode == "write",
        mode="write" if mode == "write" else "compare",
        file_numbers={f.path: f.number for f in concrete.files} if numbers else {},
    ).for_blocks()


HEX = "0123456789abcdef"


@st.composite
def sites(draw: st.DrawFn) -> tuple[FakeConcrete, str]:
    handles = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True)
    paths = ["/", *{"/" + draw(handles) for _ in range(draw(st.integers(1, 4)))}]
    pages = {path: index + 1 for index, path in enumerate(paths)}
    count = draw(st.integers(1, 4))
    numbers = draw(st.lists(st.integers(1, 999), min_size=count, max_size=count, unique=True))
    files = []
    for index, number in enumerate(numbers):
        uuid = "-".join(draw(st.text(HEX, min_size=n, max_size=n)) for n in (8, 4, 4, 4, 12))
        prefix = draw(st.from_regex(r"[0-9]{12}", fullmatch=True))
        files.append(FakeFile(number, uuid, prefix, f"file-{index}.{draw(st.sampled_from(['pdf', 'jpg']))}"))
    concrete = FakeConcrete(pages, files)
    pieces = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["page", "download", "picture", "text"]))
        if kind == "page":
            pieces.append(f'<a href="{{CCM:CID_{pages[draw(st.sampled_from(paths))]}}}">p</a>')
        elif kind == "download":
            pieces.append(f'<a href="{{CCM:FID_DL_{draw(st.sampled_from(files)).uuid}}}">d</a>')
        elif kind == "picture":
            alt = draw(st.sampled_from(["", ' alt="x"', ' class="img" alt="y"']))
            pieces.append(f'<concrete-picture fid="{draw(st.sampled_from(files)).number}"{alt} />')
        else:
            pieces.append(draw(st.sampled_from(["<p>Hello</p>", "text & more", "<b>bold</b>"])))
    return concrete, "".join(pieces)


@settings(deadline=None)
@given(sites())
def test_stored_to_export_to_references_to_stored_is_the_identity(case: tuple[FakeConcrete, str]) -> None:
    concrete, stored = case
    read = concrete.export(stored)
    [rendered] = rendered_blocks(concrete.render(stored), CONTENT_WRAPPER, 1) or [None]
    by_export = {export_name(f.url): f.path for f in concrete.files}
    by_uuid = {f.uuid: f.path for f in concrete.files}
    content = html_to_references(read, by_export.get, rendered, by_uuid.get)
    assert "{ccm:export:" not in content
    text = Text(content)
    written = text.render(resolver(concrete, mode="write"))
    assert concrete.save(written) == stored
    # The planner's comparison form of the pulled content equals the server's read of what is stored.
    desired = normalize_block_value(
        "content", {"content": text.render(resolver(concrete, mode="compare"))}, base_url=BASE
    )
    live = normalize_block_value("content", {"content": read}, base_url=BASE)
    assert desired == live


def test_a_digit_led_uuid_picture_is_lossy() -> None:
    """Exported by the UUID's leading digits (another file), rendered by the UUID: cmssync keeps such a block."""
    files = [FakeFile(5, "a0000000-0000-0000-0000-000000000000", "111122223333", "blog-06.jpg")]
    read = '<concrete-picture alt="x" file="111122223333:blog-06.jpg" />'
    rendered = Rendered(downloads=(), pictures=("444455556666:logo.png",))
    with pytest.raises(Lossy, match="another file"):
        html_to_references(read, {export_name(files[0].url): files[0].path}.get, rendered)


def test_a_download_link_without_a_rendering_is_lossy() -> None:
    with pytest.raises(Lossy):
        html_to_references('<a href="">letter-led uuid</a>', lambda _name: None, None)


def test_a_numeric_download_link_is_kept_as_stored() -> None:
    """Visitors cannot open it on 9.x, but pull does not silently change what the site has."""
    read = '<a href="{ccm:export:file:123412341234:dummy.pdf}">d</a>'
    result = html_to_references(read, lambda _n: "dummy.pdf", Rendered(downloads=("21",), pictures=()), None)
    assert result == '<a href="{CCM:FID_DL_21}">d</a>'


def test_whole_column_exports_become_id_references() -> None:
    files = {"211795449601:photo.png": "images/photo.png"}.get
    assert column_to_reference("{ccm:export:file:211795449601:photo.png}", files) == "${file-id:images/photo.png}"
    assert column_to_reference("{ccm:export:page:/about}", files) == "${page-id:/about}"
    assert column_to_reference("{ccm:export:page:}", files) == "${page-id:/}"
    assert column_to_reference("plain", files) is None
    with pytest.raises(Lossy):
        column_to_reference("{ccm:export:pagetype:resource}", files)
    with pytest.raises(Lossy):
        column_to_reference("{ccm:export:file:999:unknown.png}", files)


def test_export_name_is_the_storage_prefix_and_file_name() -> None:
    assert export_name("http://x/application/files/2117/9544/9601/photo.png") == "211795449601:photo.png"
    assert export_name("/application/files/8317/9544/8856/atomik-logo.png") == "831795448856:atomik-logo.png"
    assert export_name("http://x/download_file/abc/0") is None


def test_canonical_content_matches_a_desired_picture_with_its_read_back_form() -> None:
    desired = '<P CLASS="a"><concrete-picture fID="{ccm:export:file:2117:p.png}" alt="x"/></P>'
    live = '<p class="a"><concrete-picture alt="x" file="2117:p.png"/></p>'
    assert canonical_content(desired) == canonical_content(live) == live
    assert canonical_content(canonical_content(desired)) == canonical_content(desired)


def test_download_links_compare_by_presence() -> None:
    assert canonical_content('<a href="">a</a>') == canonical_content('<a href="{ccm:export:file:1:x.pdf}">a</a>')
    assert canonical_content('<a href="{CCM:FID_DL_abc}">a</a>') == '<a href="{ccm:file-link}">a</a>'


def test_write_mode_needs_numeric_ids_for_pictures_and_columns() -> None:
    concrete = FakeConcrete({"/": 1}, [FakeFile(38, "cf562ba1-61cb-43dd-82f5-abdfba51ac5b", "211795449601", "p.png")])
    with pytest.raises(LookupError, match=re.escape("file-id:docs/p.png")):
        Text('<concrete-picture fID="${file-id:docs/p.png}" />').render(resolver(concrete, mode="write", numbers=False))
    link = Text("${file-link:docs/p.png}").render(resolver(concrete, mode="write", numbers=False))
    assert link == "{CCM:FID_DL_cf562ba1-61cb-43dd-82f5-abdfba51ac5b}"  # by UUID: the form visitors can open


def test_the_probe_reads_numeric_ids_back() -> None:
    html = probe_html(1, 3)
    assert html == '<a href="{CCM:FID_DL_1}">1</a><a href="{CCM:FID_DL_2}">2</a><a href="{CCM:FID_DL_3}">3</a>'
    read = '<a href="{ccm:export:file:1:a.png}">1</a><a href="">2</a><a href="{ccm:export:file:3:b.pdf}">3</a>'
    assert file_numbers_from_probe(read) == {"1:a.png": 1, "3:b.pdf": 3}


# canonical_content skips lower_case_names when no tag can hold a letter to lower-case; it must never skip a change.
MARKUP = st.text(alphabet=st.sampled_from(list("<>/!-=\"' aBzÉé\u0130\u03a3\n")), max_size=40)


@settings(deadline=None)
@given(MARKUP)
def test_skipping_the_lower_casing_never_skips_a_change(html: str) -> None:
    if _NAME_TO_LOWER.search(html) is None:
        assert lower_case_names(html) == html
    assert canonical_content(html) == canonical_content_in_full(html)


@pytest.mark.parametrize(
    "html", ["<P CLASS='x'>Text</P>", "<p data-É='1'>x</p>", "<!-- <B> --><b>Bold</b>", "<p>Text</p>"]
)
def test_canonical_content_with_and_without_the_skip(html: str) -> None:
    assert canonical_content(html) == canonical_content_in_full(html)


def canonical_content_in_full(html: str) -> str:
    """canonical_content as it was before the skip: lower_case_names first, always (it is idempotent, so the skip
    cannot apply to its result)."""
    return canonical_content(lower_case_names(html))


def test_an_area_without_wrappers_deals_its_files_out_to_the_blocks_in_order() -> None:
    first = (
        '<p><a href="{ccm:export:file:411795938261:blank2.png}"><concrete-picture file="891795938261:b.jpg" /></a></p>'
    )
    second = "<p>no file</p>"
    third = '<a href="">x</a><a href="{ccm:export:file:1:c.pdf}">y</a>'
    area = (
        '<h1>Title</h1><p><a href="http://site.test/download_file/view/4ee0f842-441a-4ad0-8b78-69bdaf7c0a29/253">'
        '<picture><img src="/application/files/8917/9593/8261/balloon.jpg"></picture></a></p><p>no file</p>'
        '<a href="/download_file/view/ab12cd34-0000-4000-8000-000000000001">x</a><a href="/download_file/view/7">y</a>'
    )
    assert rendered_in_order(area, [first, second, third]) == [
        Rendered(("4ee0f842-441a-4ad0-8b78-69bdaf7c0a29",), ("891795938261:balloon.jpg",)),
        Rendered((), ()),
        Rendered(("ab12cd34-0000-4000-8000-000000000001", "7"), ()),
    ]
    # another block's download link (or one the rendering leaves out) could shift them: not told at all
    assert rendered_in_order(area + '<a href="/download_file/view/9">file block</a>', [first, second, third]) is None
    assert rendered_in_order(area, [first, second]) is None


def test_a_picture_shown_as_a_thumbnail_is_its_file() -> None:
    """The real elemental_full site renders an editor's ``<concrete-picture fID="n" />`` of plants.jpg as the theme's
    responsive thumbnails (``/application/files/thumbnails/small/1234/1234/5678/plants.jpg``); the block was kept
    as a placeholder ('shows another file on the page') and its links lost to the pull."""
    stored = '<p><concrete-picture alt="A numeric picture" file="123412345678:plants.jpg" /></p>'
    area = (
        '<p><picture><source srcset="http://site.test/application/files/thumbnails/large/1234/1234/5678/plants.jpg" '
        'media="(min-width: 900px)"><img src="http://site.test/application/files/thumbnails/small/1234/1234/5678/'
        'plants.jpg" alt="A numeric picture"></picture></p>'
    )
    assert export_name("/application/files/thumbnails/small/1234/1234/5678/plants.jpg") == "123412345678:plants.jpg"
    rendered = rendered_in_order(area, [stored])
    assert rendered == [Rendered((), ("123412345678:plants.jpg",))]
    files = {"123412345678:plants.jpg": "images/plants.jpg"}.get
    written = html_to_references(stored, lambda name: files(name), rendered[0])
    assert '<concrete-picture fID="${file-id:images/plants.jpg}" alt="A numeric picture" />' in written
    # a thumbnail in another format (a webp thumbnail type) is still that file; another file is not
    assert same_picture("123412345678:plants.webp", "123412345678:plants.jpg")
    assert not same_picture("999912345678:plants.jpg", "123412345678:plants.jpg")
