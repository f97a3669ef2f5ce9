"""A new page's blocks when its page type has default blocks: aligned with them, not added beside them.

Concrete places the default blocks of a page type (per template) on every page created with it — a blog entry gets
its type's page title block in ``Main``. Adding the content's blocks after them would show two titles, and the next
plan would not be empty. So after a page of a type other than the plain ``page`` is created, its areas are read
(one request) and each area the content manages is aligned with what the type placed there, exactly as an update
of an existing page is (``cmssync.plan.blocks.align_area``): a default block the content has is kept or updated in
place, one it does not have is deleted, and the rest is added. Areas the content does not list keep the defaults.
The page then converges in one apply.
"""

from __future__ import annotations

from cmssync.plan.actions import BlockChange
from cmssync.plan.block_changes import alignment_changes
from cmssync.plan.blocks import AlignmentError, align_area
from cmssync.plan.page_form import DEFAULT_TYPE, DesiredPage, PageForm
from cmssync.sync.engine import ApplyContext
from cmssync.sync.page_read import to_live_page


async def creation_blocks(
    context: ApplyContext, page_id: int, form: PageForm, desired: DesiredPage, planned: tuple[BlockChange, ...]
) -> tuple[list[BlockChange], dict[str, int]]:
    """The block changes that make a just-created page's areas as the content says (``desired``: its form as
    rendered for this apply; ``planned``: the plan's adds, for a page without defaults), and how many blocks each
    area holds before them."""
    if (form.fields.get("type") or DEFAULT_TYPE) == DEFAULT_TYPE:
        return list(planned), {}
    page = await context.client.get_page(page_id, includes=("areas",))
    live = to_live_page(page, None, context.base_url)
    changes: list[BlockChange] = []
    for area, wanted in desired.areas.items():
        placed = live.blocks(area)
        if not placed:
            changes += [change for change in planned if change.area == area]
            continue
        try:
            alignment = align_area(placed, wanted)
        except AlignmentError:
            changes += [change for change in planned if change.area == area]
            continue
        changes += alignment_changes(area, placed, wanted, alignment)
    return changes, {area: len(live.blocks(area)) for area in live.areas}
