"""Page handles the way Concrete's URLify makes them, and the tag stripping of page names.

``Ünïcödé & <Title> / slash`` becomes the handle ``unicode-and-title-slash`` (transliterated, ``&`` spelled out,
common short words dropped, everything else collapsed into hyphens) while the page *name* keeps the text with the
tags removed: ``Ünïcödé &  / slash`` (recorded: ``pages.create.special_chars``).
"""

from __future__ import annotations

import re
import unicodedata

# Concrete's default ``concrete.seo.exclude_words``: dropped from handles.
EXCLUDED_WORDS = frozenset(
    [
        "a",
        "an",
        "as",
        "at",
        "before",
        "but",
        "by",
        "for",
        "from",
        "is",
        "in",
        "into",
        "like",
        "of",
        "off",
        "on",
        "onto",
        "per",
        "since",
        "than",
        "the",
        "this",
        "that",
        "to",
        "up",
        "via",
        "with",
    ]
)
MAX_HANDLE_LENGTH = 128
_EXCLUDED = re.compile(r"\b(" + "|".join(sorted(EXCLUDED_WORDS)) + r")\b", re.IGNORECASE)

_TAG = re.compile(r"<[^>]*>")


def strip_tags(text: str) -> str:
    """PHP ``strip_tags``: remove anything that looks like a tag, keep the text between."""
    return _TAG.sub("", text)


def urlify(name: str) -> str:
    """The page handle for a name (``""`` when no word is left: the caller uses the page id)."""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    text = text.replace("&", " and ").lower()
    text = _EXCLUDED.sub("", text)  # whole words only: ``share_this_page`` keeps its "this"
    words = [w for w in re.split(r"[^a-z0-9]+", text) if w]  # then underscores and other marks separate words
    return "-".join(words)[:MAX_HANDLE_LENGTH].strip("-")
