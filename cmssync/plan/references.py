"""Concrete's three forms of a link in a block value, and the translation between them and content references.

A link an editor puts into a block exists in three forms (blocks.jsonl, concrete-api.md §6):

* **stored** — what the block's table holds and what a write must send: ``{CCM:CID_<page id>}``,
  ``{CCM:FID_DL_<file UUID>}``, ``<concrete-picture fID="<numeric file id>" … />``, integer file and page
  columns (``fID: 38``);
* **export** — what every API read shows (``LinkAbstractor::export`` and ``BlockController::export``):
  ``{ccm:export:page:/path}`` (home ``{ccm:export:page:}``), ``{ccm:export:file:<prefix>:<name>}``,
  ``<concrete-picture … file="<prefix>:<name>" />`` (``fid`` removed, ``file`` appended last), and the same export
  strings as whole column values; page-type and file-folder columns read ``{ccm:export:pagetype:…}`` /
  ``{ccm:export:filefolder:…}``;
* **content** — references in the content files: ``${page-link:/path}``, ``${file-link:PATH}``,
  ``<concrete-picture fID="${file-id:PATH}" … />``, ``${file-id:PATH}`` and ``${page-id:/path}`` as whole values.

Written back verbatim, an export form is stored as it is: the API then reads back exactly what was written (the
round trip *looks* lossless) while the public page shows it literally and the link is broken. So cmssync never
writes export forms: it reads export → content (``pull``), writes content → stored (apply, with numeric file ids
learned from the site), and compares desired and live both in export form (the planner renders references that way
and puts both sides through :func:`canonical_content`), which needs no numeric file ids.

A file's export name is ``<prefix>:<name>`` where the prefix is the storage path of its public URL without slashes
(``/application/files/2117/9544/9601/photo.png`` → ``211795449601:photo.png``): :func:`export_name`.

Download links are the hard case: visitors can open only links stored by lower-case UUID (a numeric one shows
"Invalid File."), and the API reads a UUID link by the UUID's leading digits — as another file, or ``href=""``. So
links are written by UUID, compared by presence only (:func:`canonical_content`), and recovered on pull from the
page's rendering (``includes=areas.content``, :func:`rendered_blocks`), which shows each link as stored.

Reads that lose information for good make a block **opaque** (:class:`Lossy`, and a type's ``keep_reason`` in
:mod:`cmssync.content.blocktypes`): a download link or picture that the rendering cannot explain, an export that
names no known file, page-type and file-folder columns (the API offers no way to learn their ids), multi-record and
table-less types. ``pull`` writes such blocks as ``- keep:`` placeholders.

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from cmssync.content.paths import check_page_path

PAGE_EXPORT = re.compile(r"\{ccm:export:page:([^{}]*)\}")
_STACK_EXPORT = re.compile(r"\{ccm:export:page:/!stacks/([^{}]+)\}")
FILE_EXPORT = re.compile(r"\{ccm:export:file:([^{}:]*):([^{}]*)\}")
OTHER_EXPORT = re.compile(r"\{ccm:export:(?:pagetype|filefolder|pagefeed|[a-z_]+):[^{}]*\}")
LINK_ATTRIBUTES = ("href", "src", "poster", "data", "background")
"""Attributes whose value is a URL: a download link stored in one (``{CCM:FID_DL_…}``) reads back as a file export,
or as an empty value when the stored id names no file by its leading digits (a letter-led UUID)."""
EMPTY_LINK = re.compile(rf"""(\s(?:{"|".join(LINK_ATTRIBUTES)})\s*=\s*)(?:""|'')""", re.IGNORECASE)
FILE_LINK = "{ccm:file-link}"
"""How a download link compares (see :func:`canonical_content`)."""
_ANY_FILE_LINK = re.compile(r"\{ccm:export:file:[^{}]*\}|\{CCM:FID_DL_[^{}]*\}", re.IGNORECASE)
_EXPORTED_DOWNLOAD = re.compile(
    r"\{ccm:export:file:[^{}]*\}|(?:" + "|".join(rf"(?<=\s{name}=)" for name in LINK_ATTRIBUTES) + r""")(?:""|'')""",
    re.IGNORECASE,
)
_RENDERED_DOWNLOAD = re.compile(r"/download_file/view/([^/\"'\s?#]+)")
_RENDERED_PICTURE = re.compile(r"<picture\b.*?<img\b[^>]*?\ssrc=[\"']([^\"']*)[\"']", re.DOTALL | re.IGNORECASE)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

_COMMENT_OR_TAG = re.compile(r"<!--.*?-->|<(/?)([A-Za-z][A-Za-z0-9:_-]*)([^>]*)>", re.DOTALL)
_ATTRIBUTE = re.compile(r"""(\s+)([^\s=/>"']+)(\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?""")
_NAME_TO_LOWER = re.compile("<[^>A-Z\x80-\U0010ffff]*[A-Z\x80-\U0010ffff]")
"""A ``<`` followed, before the next ``>``, by a character ``str.lower`` may change: only then can
:func:`lower_case_names` change anything (it lower-cases names inside tags, never text)."""
_PICTURE = re.compile(r"<concrete-picture\b([^>]*?)(\s*/?>)", re.IGNORECASE)
_PICTURE_FID_EXPORT = re.compile(r"""\s+fid\s*=\s*(["']?)\{ccm:export:file:([^{}:]*):([^{}]*)\}\1""", re.IGNORECASE)
_PICTURE_FILE = re.compile(r"""\s+file\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)


def export_name(url: str) -> str | None:
    """``<prefix>:<name>`` of a file from its public URL, as ``{ccm:export:file:…}`` names it; of a thumbnail's URL
    (``/application/files/thumbnails/<type>/<prefix>/<name>``: a picture on a theme with responsive thumbnail types,
    as ``elemental``), that of the file it was made from, with the thumbnail's extension (:func:`same_picture`)."""
    path = unquote(urlsplit(url).path)
    marker = "/application/files/"
    if marker not in path:
        return None
    segments = [s for s in path.split(marker, 1)[1].split("/") if s]
    if segments[:1] == ["thumbnails"]:
        segments = segments[2:]
    if len(segments) < 2:
        return None
    return "".join(segments[:-1]) + ":" + segments[-1]


def same_picture(shown: str | None, name: str) -> bool:
    """Whether a picture the page shows (``<prefix>:<name>`` from :func:`export_name`) is the file ``name`` names:
    the same, or a thumbnail of it — same prefix and name, the extension the thumbnail type's format gives."""
    if shown is None or shown == name:
        return shown is not None
    prefix, _, file = shown.partition(":")
    wanted_prefix, _, wanted = name.partition(":")
    return prefix == wanted_prefix and file.rsplit(".", 1)[0] == wanted.rsplit(".", 1)[0]


def page_export(path: str) -> str:
    """``{ccm:export:page:/path}``; the home page has an empty path."""
    return "{ccm:export:page:" + ("" if path == "/" else path) + "}"


def stack_handle(export: str) -> str:
    """A stack's handle from its page's export (``{ccm:export:page:/!stacks/footer}`` → ``footer``), as
    ``cmssync.plan.stack_displays`` names a stack display's stack; :class:`Lossy` for anything else."""
    found = _STACK_EXPORT.fullmatch(export)
    if found is None:
        raise Lossy(f"{export!r} names no stack")
    return found.group(1)


def page_type_export(handle: str) -> str:
    """``{ccm:export:pagetype:<handle>}``: how a page-type column reads."""
    return "{ccm:export:pagetype:" + handle + "}"


PAGE_TYPE_EXPORT = re.compile(r"\{ccm:export:pagetype:([^{}]+)\}")


def file_export(name: str) -> str:
    return "{ccm:export:file:" + name + "}"


# --- canonical form (both sides of a comparison) ------------------------------------------------------------------


def lower_case_names(html: str) -> str:
    """Tag and attribute names lower-cased, everything else as written: what saving a content block does."""

    def tag(match: re.Match[str]) -> str:
        if match.group(2) is None:
            return match.group(0)
        attributes = _ATTRIBUTE.sub(lambda a: a.group(1) + a.group(2).lower() + (a.group(3) or ""), match.group(3))
        return f"<{match.group(1)}{match.group(2).lower()}{attributes}>"

    return _COMMENT_OR_TAG.sub(tag, html)


def canonical_content(html: str) -> str:
    """A content block's HTML as the API would read it back after a save, in a form both sides share.

    Names lower-cased; a picture whose ``fid`` holds a file export (what the planner renders a desired
    ``fID="${file-id:PATH}"`` as) moved the way ``LinkAbstractor::export`` moves it: ``fid`` removed,
    ``file="<prefix>:<name>"`` appended as the last attribute; and every download link — an export
    ``{ccm:export:file:…}``, an empty link attribute (:data:`LINK_ATTRIBUTES`: how a letter-led UUID link reads
    back in an ``href``, an ``<img src>`` …), a stored ``{CCM:FID_DL_…}`` — becomes :data:`FILE_LINK`. Download
    links are compared by *presence only*: the API reads a link by UUID (the only kind a visitor can open) as the
    file whose numeric id is the UUID's leading digits, so no read tells its target; changing only the target of a
    download link therefore plans nothing (any other edit of the block writes it). Idempotent.
    """
    if _NAME_TO_LOWER.search(html) is not None:  # else no tag holds a letter to lower-case: skip a callback per tag
        html = lower_case_names(html)

    def picture(match: re.Match[str]) -> str:
        attributes, tail = match.group(1), match.group(2)
        fid = _PICTURE_FID_EXPORT.search(attributes)
        if fid is None:
            return match.group(0)
        kept = attributes[: fid.start()] + attributes[fid.end() :]
        return f'<concrete-picture{kept} file="{fid.group(2)}:{fid.group(3)}"{tail}'

    html = _PICTURE.sub(picture, html)
    html = _ANY_FILE_LINK.sub(FILE_LINK, html)
    return EMPTY_LINK.sub(lambda m: m.group(1) + '"' + FILE_LINK + '"', html)


# --- export → content (pull) --------------------------------------------------------------------------------------


class Lossy(ValueError):
    """A read value that cannot be turned into content without losing or changing what the site has."""


FileLookup = Callable[[str], str | None]
"""``<prefix>:<name>`` → the content path of that file under ``files/``, or None when it is not pulled."""


def column_to_reference(value: str, files: FileLookup) -> str | None:
    """A whole column value in export form as a reference source (``${file-id:…}`` / ``${page-id:…}``).

    None when the value is no export form; :class:`Lossy` for one cmssync cannot write back.
    """
    page = PAGE_EXPORT.fullmatch(value)
    if page is not None:
        return "${page-id:" + _page_target(page.group(1)) + "}"
    file = FILE_EXPORT.fullmatch(value)
    if file is not None:
        return "${file-id:" + _file_target(file.group(1), file.group(2), files) + "}"
    if OTHER_EXPORT.fullmatch(value):
        raise Lossy(f"{value} names an object by a path the API cannot turn back into an id")
    return None


@dataclass(frozen=True)
class Rendered:
    """What the public rendering of one content block shows about its files, in document order.

    ``downloads``: the id each download link was stored with, as written (a number or a UUID);
    ``pictures``: the export name of each picture's file (pictures are rendered by UUID when stored by UUID).
    """

    downloads: tuple[str, ...]
    pictures: tuple[str | None, ...]


def rendered_blocks(area_html: str, wrapper: str, count: int) -> list[Rendered] | None:
    """Split an area's rendered HTML (``includes=areas.content``) into its ``count`` blocks whose view starts with
    ``wrapper`` (a type's ``rendered_wrapper``), or None when the wrappers do not match (then the links of those
    blocks cannot be recovered).

    Each piece starts at a block's wrapper and runs to the next one, so it may end with other blocks' output; a
    block's own links come first, and callers take only as many as its read shows.
    """
    pieces = area_html.split(wrapper)[1:]
    if len(pieces) != count:
        return None
    return [
        Rendered(
            downloads=tuple(m.group(1) for m in _RENDERED_DOWNLOAD.finditer(piece)),
            pictures=tuple(export_name(m.group(1)) for m in _RENDERED_PICTURE.finditer(piece)),
        )
        for piece in pieces
    ]


def rendered_in_order(area_html: str, blocks: Sequence[str]) -> list[Rendered] | None:
    """What the area's rendering shows of the files of ``blocks`` (each one block's rich text as the API reads it,
    in the area's order) when the theme's view of their type has no wrapper to split it by (Concrete's own content
    view prints the HTML alone, as ``elemental_full``'s theme leaves it): the area's download links and pictures,
    in document order, dealt out to the blocks in order. None unless the area shows exactly as many of each as the
    blocks hold (another block that renders a download link or a picture, or a link the rendering leaves out, could
    shift them)."""
    downloads = [m.group(1) for m in _RENDERED_DOWNLOAD.finditer(area_html)]
    pictures = [export_name(m.group(1)) for m in _RENDERED_PICTURE.finditer(area_html)]
    wanted = [(len(_EXPORTED_DOWNLOAD.findall(html)), len(_PICTURE.findall(html))) for html in blocks]
    if sum(d for d, _ in wanted) != len(downloads) or sum(p for _, p in wanted) != len(pictures):
        return None
    found: list[Rendered] = []
    for links, images in wanted:
        found.append(Rendered(tuple(downloads[:links]), tuple(pictures[:images])))
        downloads, pictures = downloads[links:], pictures[images:]
    return found


def html_to_references(
    html: str, files: FileLookup, rendered: Rendered | None = None, uuids: FileLookup | None = None
) -> str:
    """Content HTML read from the API, with its export forms as references (``$${`` escaping already applied).

    Download links are recovered from ``rendered`` (their export names the wrong file for a link by UUID): a link
    stored with the lower-case UUID of a pulled file (``uuids``: UUID → content path) becomes
    ``${file-link:PATH}``; any other is written back exactly as it was stored (``{CCM:FID_DL_37}`` — a numeric
    link, which visitors cannot open on 9.x, is kept, not silently changed). A picture whose rendered file differs
    from its export was stored by a digit-led UUID. Raises :class:`Lossy` when a link or picture cannot be
    recovered, an export names no pulled file, or an export kind cannot be written.
    """
    downloads = list(_EXPORTED_DOWNLOAD.finditer(html))
    if downloads and (rendered is None or len(rendered.downloads) < len(downloads)):
        raise Lossy("the download links of this block cannot be told from the API's read")
    pictures = list(_PICTURE.finditer(html))
    resolved = [_PICTURE_FILE.search(m.group(1)) for m in pictures]
    if any(resolved) and (rendered is None or len(rendered.pictures) < len(pictures)):
        raise Lossy("the pictures of this block cannot be checked against what the page shows")
    for index, found in enumerate(resolved):
        if found is not None and rendered is not None:
            name = next(g for g in found.groups() if g is not None)
            if not same_picture(rendered.pictures[index], name):
                raise Lossy(f"picture {name} shows another file on the page (it is stored by a UUID)")

    written = iter(rendered.downloads if rendered is not None else ())

    def download(match: re.Match[str]) -> str:
        stored = next(written)
        path = uuids(stored) if uuids is not None and _UUID.fullmatch(stored) else None
        link = "${file-link:" + path + "}" if path is not None else "{CCM:FID_DL_" + stored + "}"
        return link if match.group(0).startswith("{") else '"' + link + '"'

    def page(match: re.Match[str]) -> str:
        return "${page-link:" + _page_target(match.group(1)) + "}"

    def picture(match: re.Match[str]) -> str:
        attributes, tail = match.group(1), match.group(2)
        found = _PICTURE_FILE.search(attributes)
        if found is None:
            return match.group(0)
        prefix, _, name = next(g for g in found.groups() if g is not None).partition(":")
        target = _file_target(prefix, name, files)
        kept = attributes[: found.start()] + attributes[found.end() :]
        return f'<concrete-picture fID="${{file-id:{target}}}"{kept}{tail}'

    html = _PICTURE.sub(picture, html)
    html = _EXPORTED_DOWNLOAD.sub(download, html)
    html = PAGE_EXPORT.sub(page, html)
    other = OTHER_EXPORT.search(html)
    if other is not None:
        raise Lossy(f"{other.group(0)} cannot be written back")
    return html


def _page_target(path: str) -> str:
    target = path or "/"
    try:
        check_page_path(target, existing=True)
    except ValueError as exc:
        raise Lossy(f"link to page {path!r}: {exc}") from None
    return target


def _file_target(prefix: str, name: str, files: FileLookup) -> str:
    target = files(f"{prefix}:{name}")
    if target is None:
        raise Lossy(f"link to file {prefix}:{name}, which is not among the pulled files")
    return target


# --- content → stored (write) -------------------------------------------------------------------------------------


def page_link(page_id: int) -> str:
    return f"{{CCM:CID_{page_id}}}"


def file_link(identifier: int | str) -> str:
    """A stored download link. Write the file's lower-case UUID: 9.x answers "Invalid File." to visitors for a
    numeric id (blocks.jsonl ``links.public_download.*``); the probe uses numbers, which the API exports right."""
    return f"{{CCM:FID_DL_{identifier}}}"


def file_numbers_from_probe(html: str) -> dict[str, int]:
    """``<prefix>:<name>`` → numeric id from the read of a probe block ``<a href="{CCM:FID_DL_n}">n</a>…``.

    Numeric file ids never appear in API answers (blocks.jsonl ``setup.probe_numeric_file_ids``); the export of a
    download link to id ``n`` names the file behind it, so a block of such links tells the ids of many files at once.
    """
    found: dict[str, int] = {}
    for match in re.finditer(r"""<a href="\{ccm:export:file:([^{}:]*):([^{}]*)\}">(\d+)</a>""", html):
        found.setdefault(f"{match.group(1)}:{match.group(2)}", int(match.group(3)))
    return found


def probe_html(first: int, count: int) -> str:
    """The probe block's content for ids ``first .. first+count-1`` (see :func:`file_numbers_from_probe`)."""
    return "".join(f'<a href="{file_link(n)}">{n}</a>' for n in range(first, first + count))
