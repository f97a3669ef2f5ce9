"""What the plan says about a stack (``stacks/<handle>.yaml``, planned as the page ``/!stacks/<handle>``) that it
does not say about a page: what the API cannot do with stacks, and what they do differently (stacks.jsonl).

Pure.
"""

from __future__ import annotations

from cmssync.content.paths import is_stack_path, page_named
from cmssync.plan.snapshot import LivePage

DRAFTS_SHOW = (
    "a stack's unapproved draft shows on the site's pages at once (Concrete renders a stack's newest version), so "
    "publish: draft does not hold this change back"
)


def stack_warnings(path: str, name: str, live: LivePage, *, changes: bool, draft: bool) -> list[str]:
    """The warnings for the stack at ``path`` (none for a page): a ``name`` that differs from the site's is never
    written (a theme finds a global area's stack by its name); with ``draft`` (``publish: draft``) and ``changes``,
    the draft is public anyway."""
    if not is_stack_path(path):
        return []
    found = []
    named = page_named(path)
    if name and name != live.name:
        found.append(
            f"{named}: the stack's name is {live.name!r} on the site; name {name!r} is not written (a theme "
            "finds a global area's stack by its name): rename it in the dashboard if it must change"
        )
    if changes and draft:
        found.append(f"{named}: {DRAFTS_SHOW}")
    return found
