"""Which stack each stack display of an area shows, told from the area's rendering. Pure.

The API reads a stack display (a block type with ``shows_stack``) as ``value: []``, whatever stack it shows; the page's
rendering (``includes=areas.content``) holds the displayed stack's ``Main`` area exactly as the stack's own read
renders it (recorded: ``tests/conformance/concrete-9.3.1/stack-displays.jsonl``). So the displays of an area are
named by finding the stacks' renderings in the area's:

* every stack that renders something is looked for, line by line (lines stripped, blank ones left out): where a
  line of the area's rendering equals the stack's first line, the lines that follow are compared with the stack's,
  and they show that stack when at least :data:`SAME_LINES` of the stack's lines are there in order. Not all of
  them, because a stack renders a little differently inside a page than on its own: a form's action names the
  page it is shown on and gains a token (recorded on the real site with the sample site's footer form). A
  rendering found inside a longer one (a stack whose blocks are the first of another's) is not counted there;
* what is found, in order, must not overlap and must be exactly as many as the area's displays: then the first
  display shows the first stack found, and so on. Otherwise none of the area's displays is named, and each says why
  (two stacks that render the same, a stack not read, one that renders nothing, one that renders differently
  inside the page — a block showing the current page's title, say);
* a stack's version for another locale (``/!stacks/footer/footer``) names its neutral stack (``/!stacks/footer``):
  a page of that locale renders it for a display of the neutral stack.

A display named so is described as if the API had exported a page column: ``{ccm:export:page:/!stacks/<handle>}``,
which is how the content's ``stack: <handle>`` compares (``cmssync.plan.desired.Resolver.stack``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import pairwise

from cmssync.content.paths import STACKS_PREFIX, page_named

SAME_LINES = 0.9
"""The share of a stack's lines (in order) that must be found where a display shows it."""


@dataclass(frozen=True)
class _Found:
    start: int
    end: int
    paths: tuple[str, ...]
    """The stacks that render these lines (several: they cannot be told apart)."""


def name_stacks(area_html: str | None, displays: int, renders: Mapping[str, str]) -> list[str] | str:
    """The path of the stack each of the area's ``displays`` stack displays shows, in order, or why they cannot be
    named. ``renders``: each stack read (path → its ``Main`` area's rendering)."""
    if area_html is None:
        return "the page was read without its rendering, which alone names the stack"
    by_lines: dict[tuple[str, ...], list[str]] = {}
    for path, rendered in sorted(renders.items()):
        lines = _lines(rendered)
        if lines:
            by_lines.setdefault(lines, []).append(path)
    page = _lines(area_html)
    found = [
        _Found(start, end, tuple(paths)) for lines, paths in by_lines.items() for start, end in _shown(page, lines)
    ]
    outer = [f for f in found if not any(_inside(f, o) for o in found)]
    outer.sort(key=lambda f: (f.start, f.end))
    if len(outer) != displays or any(a.end > b.start for a, b in pairwise(outer)):
        return (
            f"the page's rendering shows {len(outer)} of the {len(by_lines)} stacks read where the area has "
            f"{displays} stack display(s): a stack shown renders nothing, renders differently inside the page, or "
            "was not read"
        )
    same = next((f.paths for f in outer if len(f.paths) > 1), None)
    if same is not None:
        return f"{' and '.join(page_named(p) for p in same)} render the same, so the page's rendering cannot tell them"
    return [neutral(f.paths[0]) for f in outer]


def neutral(path: str) -> str:
    """The neutral stack of a stack's path: itself, or the stack a localized version (``/!stacks/a/a``) is of."""
    return STACKS_PREFIX + path[len(STACKS_PREFIX) :].split("/", 1)[0]


def _lines(html: str) -> tuple[str, ...]:
    return tuple(line for raw in html.splitlines() if (line := raw.strip()))


def _shown(page: tuple[str, ...], lines: tuple[str, ...]) -> list[tuple[int, int]]:
    """Where ``page`` shows ``lines`` (start and end line), one place after another: each place starts with the
    first of ``lines`` and holds :data:`SAME_LINES` of them in order."""
    places = []
    at = 0
    while at < len(page):
        if page[at] == lines[0]:
            window = page[at : at + len(lines)]
            matcher = SequenceMatcher(None, lines, window, autojunk=False)
            if sum(block.size for block in matcher.get_matching_blocks()) >= SAME_LINES * len(lines):
                places.append((at, at + len(window)))
                at += len(window)
                continue
        at += 1
    return places


def _inside(found: _Found, other: _Found) -> bool:
    """Whether ``found`` lies within the longer ``other`` (a stack whose lines begin another's)."""
    longer = other.end - other.start > found.end - found.start
    return other is not found and longer and other.start <= found.start and found.end <= other.end
