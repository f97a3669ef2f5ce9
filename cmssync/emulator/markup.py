"""``LinkAbstractor`` of a content block: what saving stores, what the API reads back, what a page renders.

Checked against ``blocks.jsonl`` (``links.*``, ``exportform.*``):

* **save** (:func:`translate_to`) re-serialises the HTML with **tag and attribute names lower-cased** (quote style,
  unquoted values, entities, comments and unclosed tags are kept as written) and turns the URLs the rich-text editor
  writes into placeholders: ``<img src="<site>/download_file/view_inline/<id>" …>`` →
  ``<concrete-picture fid="<id>" … />``, ``<site>/index.php?cID=N`` → ``{CCM:CID_N}``,
  ``<site>/download_file/view/<id>`` → ``{CCM:FID_DL_<id>}``, any other ``<site>`` prefix → ``{CCM:BASE_URL}``.
  Placeholders and export forms are stored as sent.
* **read** (:func:`export`, every API answer that shows a content value) turns placeholders into export forms:
  ``{CCM:CID_N}`` (any case) → ``{ccm:export:page:<path>}`` (home and missing pages: ``{ccm:export:page:}``);
  ``{CCM:FID_DL_<x>}`` → ``{ccm:export:file:<prefix>:<name>}`` of the file whose **numeric** id is ``x`` cast to an
  integer — a UUID counts as its leading digits, so ``{CCM:FID_DL_5cae…}`` names file 5 — or ``""`` when there is
  none; ``<concrete-picture fid="x">`` likewise loses ``fid`` and gains ``file="<prefix>:<name>"`` as its last
  attribute (unchanged when no file is found). ``{CCM:FID_<x>}`` and ``{CCM:BASE_URL}`` stay.
* **render** (:func:`render`, public pages and ``areas.content``) expands placeholders to URLs; export forms written
  back through the API are shown literally (they are not placeholders).
"""

from __future__ import annotations

import html
import re
import sqlite3
from collections.abc import Iterator

from cmssync.emulator.store import Store

BASE_URL_PLACEHOLDER = "{CCM:BASE_URL}"

_COMMENT_OR_TAG = re.compile(r"<!--.*?-->|<(/?)([A-Za-z][A-Za-z0-9:_-]*)([^>]*)>", re.DOTALL)
_ATTRIBUTE = re.compile(r"""(\s+)([^\s=/>"']+)(\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?""")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_CID = re.compile(r"\{CCM:CID_(\d+)\}", re.IGNORECASE)
_FID_DL = re.compile(r"\{CCM:FID_DL_([^}]*)\}", re.IGNORECASE)
_FID = re.compile(r"\{CCM:FID_(?!DL_)([^}]*)\}", re.IGNORECASE)
_PICTURE = re.compile(r"<concrete-picture\b([^>]*?)(\s*/?>)", re.IGNORECASE)
_PICTURE_FID = re.compile(r"""\s+fid\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"'/]+))""", re.IGNORECASE)


# --- save ----------------------------------------------------------------------------------------------------------


def lower_case_names(text: str) -> str:
    """Tag and attribute names lower-cased, everything else (quotes, values, comments, text) as written."""

    def tag(match: re.Match[str]) -> str:
        if match.group(2) is None:
            return match.group(0)  # a comment
        attributes = _ATTRIBUTE.sub(lambda a: a.group(1) + a.group(2).lower() + (a.group(3) or ""), match.group(3))
        return f"<{match.group(1)}{match.group(2).lower()}{attributes}>"

    return _COMMENT_OR_TAG.sub(tag, text)


def translate_to(text: str, base_url: str) -> str:
    """What a content block's ``save()`` stores for ``text``."""
    text = lower_case_names(text)
    base = re.escape(base_url.rstrip("/"))
    if not base:
        return text

    def inline_image(match: re.Match[str]) -> str:
        attributes = match.group(1) + match.group(3)
        return f'<concrete-picture fid="{match.group(2)}"{attributes.rstrip()} />'

    text = re.sub(
        rf"""<img((?:\s+(?!src\b)[^\s=>]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?)*)\s+src\s*=\s*["']{base}"""
        rf"""/download_file/view_inline/([^"'/]+)["']([^>]*?)\s*/?>""",
        inline_image,
        text,
    )
    text = re.sub(rf"{base}/index\.php\?cID=(\d+)", r"{CCM:CID_\1}", text)
    text = re.sub(rf"{base}/download_file/view/([^\"'/?#\s]+)", r"{CCM:FID_DL_\1}", text)
    return re.sub(rf"{base}(?=[/\"'\s]|$)", lambda _: BASE_URL_PLACEHOLDER, text)


# --- lookups -------------------------------------------------------------------------------------------------------


def leading_number(text: str) -> int:
    """PHP's ``(int)`` of a string: its leading digits, 0 when there are none."""
    found = re.match(r"\s*(\d+)", text)
    return int(found.group(1)) if found else 0


def file_by_number(store: Store, text: str) -> tuple[str, str] | None:
    """``(prefix without slashes, filename)`` of the file whose numeric id is ``(int) text``."""
    row = store.one("SELECT prefix, filename FROM files WHERE num_id = ?", leading_number(text))
    return (str(row["prefix"]).replace("/", ""), str(row["filename"])) if row else None


def export_file(store: Store, text: str) -> str:
    found = file_by_number(store, text)
    return f"{{ccm:export:file:{found[0]}:{found[1]}}}" if found else ""


def page_path(store: Store, page_id: int) -> str | None:
    """The page's path for an export form (``""`` for home), ``None`` when there is no such page."""
    row = store.one("SELECT path FROM pages WHERE id = ?", page_id)
    return None if row is None else str(row["path"] or "")


# --- read ----------------------------------------------------------------------------------------------------------


def export(text: str, store: Store) -> str:
    """``LinkAbstractor::export``: a stored content value as the API returns it."""
    text = _CID.sub(lambda m: "{ccm:export:page:" + (page_path(store, int(m.group(1))) or "") + "}", text)
    text = _FID_DL.sub(lambda m: export_file(store, m.group(1)), text)

    def picture(match: re.Match[str]) -> str:
        attributes, tail = match.group(1), match.group(2)
        fid = _PICTURE_FID.search(attributes)
        if fid is None:
            return match.group(0)
        found = file_by_number(store, next(g for g in fid.groups() if g is not None))
        if found is None:
            return match.group(0)
        kept = attributes[: fid.start()] + attributes[fid.end() :]
        return f'<concrete-picture{kept} file="{found[0]}:{found[1]}"{tail}'

    return _PICTURE.sub(picture, text)


def referenced_file_ids(text: str, store: Store) -> Iterator[int]:
    """Numeric ids of the files ``includes=files`` lists for a content value (duplicates kept)."""
    for match in _FID_DL.finditer(text):
        row = store.one("SELECT num_id FROM files WHERE num_id = ?", leading_number(match.group(1)))
        if row is not None:
            yield int(row["num_id"])
    for match in _PICTURE.finditer(text):
        fid = _PICTURE_FID.search(match.group(1))
        if fid is not None:
            row = _file_row(store, next(g for g in fid.groups() if g is not None))
            if row is not None:
                yield int(row["num_id"])


# --- render --------------------------------------------------------------------------------------------------------


def _file_row(store: Store, identifier: str) -> sqlite3.Row | None:
    """A file by UUID when the text is one, else by number (``File::getByUUIDOrID``)."""
    if _UUID.match(identifier):
        return store.one("SELECT * FROM files WHERE uuid = ?", identifier.lower())
    return store.one("SELECT * FROM files WHERE num_id = ?", leading_number(identifier))


def render(text: str, store: Store, base_url: str, page_id: int) -> str:
    """``LinkAbstractor::translateFrom``: placeholders as the public page shows them."""
    base = base_url.rstrip("/")

    def page_url(match: re.Match[str]) -> str:
        path = page_path(store, int(match.group(1)))
        return "" if path is None else f"{base}{path or '/'}"

    def inline_file(match: re.Match[str]) -> str:
        row = _file_row(store, match.group(1))
        return f"{base}/application/files/{row['prefix']}/{row['filename']}" if row else ""

    def picture(match: re.Match[str]) -> str:
        attributes = match.group(1)
        fid = _PICTURE_FID.search(attributes)
        if fid is None:
            return match.group(0)
        row = _file_row(store, next(g for g in fid.groups() if g is not None))
        if row is None:
            return ""
        alt = re.search(r"""\salt\s*=\s*(?:"([^"]*)"|'([^']*)')""", attributes)
        alt_text = next((g for g in alt.groups() if g is not None), "") if alt else ""
        width = re.search(r"width:\s*(\d+)px", attributes)
        size = f' width="{width.group(1)}"' if width else ""
        src = f"/application/files/{row['prefix']}/{row['filename']}"
        return f'<picture><img src="{src}" alt="{html.escape(alt_text)}"{size}></picture>'

    text = _CID.sub(page_url, text)
    text = _FID_DL.sub(lambda m: f"{base}/download_file/view/{m.group(1)}/{page_id}", text)
    text = _FID.sub(inline_file, text)
    text = _PICTURE.sub(picture, text)
    return text.replace(BASE_URL_PLACEHOLDER, base)
