"""Canonical HTML: one serialisation per meaning, so an editor's re-save is not a difference.

Pure, stdlib only (:class:`html.parser.HTMLParser`). Rich-text editors and the CMS re-serialise markup without
changing it: attribute order, quoting, entities (``&eacute;`` vs ``é``, ``&#39;`` vs ``'``), ``<br/>`` vs ``<br>``,
upper-case tag names, and whitespace (line breaks between paragraphs, runs of spaces). :func:`canonical_html` maps
all of those to one form:

* tag and attribute names lower-case, attributes sorted by name, values double-quoted with ``&``, ``<``, ``>`` and
  ``"`` escaped (a valueless attribute stays valueless);
* text with every character reference decoded, then only ``&``, ``<`` and ``>`` escaped (``&nbsp;`` becomes
  U+00A0, which is what it means);
* void elements (``br``, ``img``, ``hr`` …) written without a closing slash;
* whitespace collapsed to one space outside ``pre``/``textarea``/``script``/``style``, and dropped next to
  block-level tags (where a browser does not render it);
* comments kept (they can carry meaning for the CMS), doctype and processing instructions kept verbatim.

It is idempotent (``canonical_html(canonical_html(x)) == canonical_html(x)``). It is used where values are *compared*
(block values in ``cmssync.plan.blocks.values_match``, page descriptions, area bases, word diffs), never on what is
written to the site or on the values whose digests the state records, so recorded digests are unchanged by it and
states written before it compare as they did. Limits: it does not repair broken markup (an unclosed tag stays
unclosed) and does not treat ``<b>`` and ``<strong>`` as equal — they are different markup.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from html.parser import HTMLParser

VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})
BLOCK = frozenset(
    {"address", "article", "aside", "blockquote", "body", "br", "dd", "div", "dl", "dt", "figcaption", "figure"}
    | {"footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "head", "header", "hr", "html", "li", "main", "nav"}
    | {"ol", "p", "pre", "section", "table", "tbody", "td", "tfoot", "th", "thead", "title", "tr", "ul"}
)
RAW = frozenset({"pre", "textarea", "script", "style"})
_SPACE = re.compile(r"[ \t\n\r\f]+")


class _Canonicaliser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.raw_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.out.append(self._tag(tag, attrs))
        if tag in RAW and tag not in VOID:
            self.raw_depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.out.append(self._tag(tag, attrs))
        if tag not in VOID:
            self.out.append(f"</{tag}>")

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return  # </br> and the like: nothing to close
        if tag in RAW and self.raw_depth:
            self.raw_depth -= 1
        self.out.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        text = data if self.raw_depth else _SPACE.sub(" ", data)
        self.out.append(html.escape(text, quote=False))

    def handle_comment(self, data: str) -> None:
        self.out.append(f"<!--{data}-->")

    def handle_decl(self, decl: str) -> None:
        self.out.append(f"<!{decl}>")

    def handle_pi(self, data: str) -> None:
        self.out.append(f"<?{data}>")

    def unknown_decl(self, data: str) -> None:
        self.out.append(f"<![{data}]>")

    @staticmethod
    def _tag(tag: str, attrs: list[tuple[str, str | None]]) -> str:
        parts = [tag]
        for name, value in sorted(attrs, key=lambda item: item[0]):
            parts.append(name if value is None else f'{name}="{html.escape(value, quote=True)}"')
        return "<" + " ".join(parts) + ">"


_TAG_NAME = re.compile(r"^</?([a-z0-9-]+)")


def _is_block(token: str) -> bool:
    match = _TAG_NAME.match(token)
    return match is not None and match.group(1) in BLOCK


@lru_cache(maxsize=1 << 15)
def canonical_html(fragment: str) -> str:
    """The canonical form of an HTML fragment or plain text (see the module docstring).

    Cached per distinct string (parsing costs ~80 µs): an area's alignment compares every live block with every
    desired block of its type, and a plan of many changed pages must not parse the same values again and again."""
    if "<" not in fragment and "&" not in fragment:
        return _SPACE.sub(" ", fragment).strip(" ")
    parser = _Canonicaliser()
    parser.feed(fragment)
    parser.close()
    tokens = parser.out
    # Whitespace next to a block-level tag is not rendered: drop it (never inside raw elements, whose text was kept).
    result: list[str] = []
    for index, token in enumerate(tokens):
        if token.startswith("<"):
            if _is_block(token) and result and not result[-1].startswith("<"):
                result[-1] = result[-1].rstrip(" ")
            result.append(token)
            continue
        if result and result[-1].startswith("<") and _is_block(result[-1]) and not _in_raw(tokens, index):
            token = token.lstrip(" ")
        if token:
            result.append(token)
    return "".join(result).strip(" ")


def _in_raw(tokens: list[str], index: int) -> bool:
    previous = tokens[index - 1] if index else ""
    match = _TAG_NAME.match(previous)
    return match is not None and match.group(1) in RAW and not previous.startswith("</")


def looks_like_markup(value: str) -> bool:
    return "<" in value or "&" in value


def comparable(value: str) -> str:
    """A value as compared: canonical when it holds markup or entities, else as it is (plain text keeps its
    spaces)."""
    return canonical_html(value) if looks_like_markup(value) else value


def same_html(a: str, b: str) -> bool:
    """Whether two values mean the same (markup compared canonically; cheap when they are equal as strings)."""
    return a == b or ((looks_like_markup(a) or looks_like_markup(b)) and canonical_html(a) == canonical_html(b))
