"""Word-level diffs of rich text for the text and markdown plans (the HTML report has its own rendering).

Pure. The alignment is :func:`cmssync.render.html.worddiff.diff_tokens` (one word-diff implementation for every
format): tags, entities, words and whitespace are tokens, so a three-word change in a long paragraph is three
words, not two whole lines. Both sides are first put in canonical HTML form (:func:`cmssync.plan.canonical_html
.canonical_html`), so a re-serialisation by an editor (attribute order, entities, ``<br/>``) does not show.

The rendering keeps a few words of context around each change and cuts the unchanged stretches between changes
(``…``). Unchanged tags are hidden; a changed tag is shown as its source. Deleted runs read ``[-old words-]`` and
inserted runs ``{+new words+}`` (``git diff --word-diff`` style) in text; markdown uses ``<del>``/``<ins>``, which
GitHub and GitLab render in comments.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import zip_longest
from typing import Literal

from cmssync.plan.canonical_html import canonical_html
from cmssync.render.html.worddiff import Segment, counts, diff_tokens

CONTEXT_WORDS = 6
"""Words of unchanged text kept on each side of a change."""
_TAG = re.compile(r"^<[A-Za-z/!]")
_DOWNLOAD_NAME = re.compile(r"\[download link [^\]]*\]")


def _unnamed(token: str) -> str:
    """A token as it compares: a download link without the file name only one side can tell
    (``cmssync.render.text.readable``): the site's read does not say which file a link serves."""
    return _DOWNLOAD_NAME.sub("[download link]", token) if "[download link " in token else token


Style = Literal["text", "markdown"]


@dataclass(frozen=True)
class WordDiff:
    text: str
    """The rendered diff (one line per paragraph of changes)."""
    inserted: int
    deleted: int

    def summary(self) -> str:
        return f"+{self.inserted} −{self.deleted} words"


def word_diff(before: str, after: str, *, style: Style = "text", context: int = CONTEXT_WORDS) -> WordDiff:
    """The word diff of two HTML fragments (or plain texts), rendered for ``style``."""
    segments = diff_tokens(canonical_html(before), canonical_html(after), key=_unnamed)
    inserted, deleted = counts(segments)
    parts: list[str] = []
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment.op == "=":
            parts.append(_equal(segment.tokens, context, head=index > 0, tail=index < last))
        else:
            parts.append(_changed(segment, style))
    text = re.sub(r"[ \t]*\n[\s]*", "\n", "".join(parts)).strip()
    return WordDiff(text=text, inserted=inserted, deleted=deleted)


def _visible(tokens: Sequence[str]) -> str:
    return "".join(" " if _TAG.match(t) else html.unescape(t) if t.startswith("&") else t for t in tokens)


def _equal(tokens: Sequence[str], context: int, *, head: bool, tail: bool) -> str:
    """An unchanged run: whole when short, else ``context`` words next to each neighbouring change."""
    words = " ".join(_visible(tokens).split()).split(" ")
    keep_start = context if head else 0
    keep_end = context if tail else 0
    if len(words) <= keep_start + keep_end + 2:
        return _pad(" ".join(words), tokens)
    start = " ".join(words[:keep_start])
    end = " ".join(words[len(words) - keep_end :]) if keep_end else ""
    return _pad(
        " … ".join(part for part in (start, end) if part) if start and end else (start + " …" if start else "… " + end),
        tokens,
    )


def _pad(text: str, tokens: Sequence[str]) -> str:
    """Keep the spaces that separated the run from its neighbours."""
    raw = _visible(tokens)
    lead = " " if raw[:1].isspace() else ""
    trail = " " if raw[-1:].isspace() else ""
    return lead + text.strip() + trail if text.strip() else lead or trail


def _changed(segment: Segment, style: Style) -> str:
    raw = "".join(t if _TAG.match(t) else html.unescape(t) if t.startswith("&") else t for t in segment.tokens)
    shown = " ".join(raw.split()) or "␣"
    lead = " " if raw[:1].isspace() and shown != "␣" else ""
    trail = " " if raw[-1:].isspace() and shown != "␣" else ""
    if style == "markdown":
        element = "ins" if segment.op == "+" else "del"
        return f"{lead}<{element}>{html.escape(shown)}</{element}>{trail}"
    marked = f"{{+{shown}+}}" if segment.op == "+" else f"[-{shown}-]"
    return lead + marked + trail


def word_diff_sides(before: str, after: str, *, context: int = CONTEXT_WORDS) -> list[tuple[str, str]]:
    """The word diff as its two sides, paragraph by paragraph: (the line before, the line after), each with the
    same context and its own changed words marked (``[-old-]`` before, ``{+new+}`` after). For a unified-diff
    view, where a line is coloured by its first character (markdown's ```` ```diff ```` on GitHub)."""
    segments = diff_tokens(canonical_html(before), canonical_html(after), key=_unnamed)
    last = len(segments) - 1
    sides: list[list[str]] = []
    for side in ("-", "+"):
        parts = [
            _equal(segment.tokens, context, head=index > 0, tail=index < last)
            if segment.op == "="
            else _changed(segment, "text")
            for index, segment in enumerate(segments)
            if segment.op in ("=", side)
        ]
        sides.append(re.sub(r"[ \t]*\n[\s]*", "\n", "".join(parts)).strip().splitlines())
    return list(zip_longest(sides[0], sides[1], fillvalue=""))
