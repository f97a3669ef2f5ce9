"""Area alignment: small readable examples, and a proof of optimality against brute force."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cmssync.plan.blocks import (
    Add,
    AlignmentError,
    AreaAlignment,
    Delete,
    DesiredBlock,
    Keep,
    LiveBlock,
    Update,
    align_area,
    search_area,
    values_match,
)


def live(*blocks: tuple[str, str]) -> list[LiveBlock]:
    return [LiveBlock(id=100 + i, type=t, value={"content": v}) for i, (t, v) in enumerate(blocks)]


def want(*blocks: tuple[str, str]) -> list[DesiredBlock]:
    return [DesiredBlock(type=t, value={"content": v}) for t, v in blocks]


def simulate(area: Sequence[LiveBlock], alignment: AreaAlignment) -> list[tuple[str, Mapping[str, str]]]:
    """Run the operations the way the API would: adds append, updates keep the type, deletes remove."""
    blocks = {b.id: b for b in area}
    order = [b.id for b in area]
    seen_add = False
    for op in alignment.ops:
        match op:
            case Keep(live_id=live_id):
                assert not seen_add
                assert live_id in blocks
            case Update(live_id=live_id, value=value):
                assert not seen_add
                old = blocks[live_id]
                blocks[live_id] = LiveBlock(id=live_id, type=old.type, value=value)
            case Delete(live_id=live_id):
                assert not seen_add
                del blocks[live_id]
                order.remove(live_id)
            case Add(type=type_, value=value):
                seen_add = True
                new_id = max([*blocks, 0, *order]) + 1000
                blocks[new_id] = LiveBlock(id=new_id, type=type_, value=value)
                order.append(new_id)
    return [(blocks[i].type, blocks[i].value) for i in order]


def assert_ends_as_desired(area: Sequence[LiveBlock], desired: Sequence[DesiredBlock], result: AreaAlignment) -> None:
    final = simulate(area, result)
    assert [t for t, _ in final] == [d.type for d in desired]
    for (_, value), d in zip(final, desired, strict=True):
        assert values_match(value, d.value)


def brute_force(area: Sequence[LiveBlock], desired: Sequence[DesiredBlock]) -> tuple[int, int]:
    """(cost, deletes) of the best solution, by trying every kept subsequence of the live area."""
    best: tuple[int, int] | None = None
    n, m = len(area), len(desired)
    for k in range(min(n, m) + 1):
        for kept in combinations(range(n), k):
            if any(area[i].type != desired[t].type for t, i in enumerate(kept)):
                continue
            updates = sum(not values_match(area[i].value, desired[t].value) for t, i in enumerate(kept))
            candidate = (updates + (n - k) + (m - k), n - k)
            best = candidate if best is None else min(best, candidate)
    assert best is not None  # k = 0 (delete everything, add everything) is always possible
    return best


# --- examples -------------------------------------------------------------------------------------------------


def test_identical_area_needs_nothing() -> None:
    area = live(("content", "a"), ("html", "b"))
    result = align_area(area, want(("content", "a"), ("html", "b")))
    assert result.ops == (Keep(100, 0), Keep(101, 1))
    assert result.cost == 0
    assert not result.changed
    assert result.changes == ()


def test_empty_areas() -> None:
    assert align_area([], []).ops == ()
    assert align_area([], want(("html", "x"))).ops == (Add(0, "html", {"content": "x"}),)
    assert align_area(live(("html", "x")), []).ops == (Delete(100),)


def test_changed_value_is_updated_in_place() -> None:
    result = align_area(live(("content", "a")), want(("content", "b")))
    assert result.ops == (Update(100, 0, {"content": "b"}, {"content": "a"}),)
    assert result.cost == 1


def test_type_change_deletes_and_adds() -> None:
    result = align_area(live(("content", "a")), want(("html", "a")))
    assert result.ops == (Delete(100), Add(0, "html", {"content": "a"}))


def test_remove_from_the_middle() -> None:
    result = align_area(
        live(("content", "a"), ("content", "b"), ("content", "c")), want(("content", "a"), ("content", "c"))
    )
    # Deleting b (1 call) beats updating b to c and deleting c (2 calls).
    assert result.ops == (Keep(100, 0), Delete(101), Keep(102, 1))


def test_insert_in_the_middle() -> None:
    area = live(("content", "a"), ("content", "c"))
    desired = want(("content", "a"), ("content", "b"), ("content", "c"))
    result = align_area(area, desired)
    # Only appends are possible: update c to b, then add c (2 calls).
    assert result.ops == (
        Keep(100, 0),
        Update(101, 1, {"content": "b"}, {"content": "c"}),
        Add(2, "content", {"content": "c"}),
    )
    assert_ends_as_desired(area, desired, result)


def test_reorder_of_mixed_types() -> None:
    area = live(("html", "h"), ("content", "c"))
    desired = want(("content", "c"), ("html", "h"))
    result = align_area(area, desired)
    # Keep the content block, delete the html block and add it again at the end.
    assert result.ops == (Delete(100), Keep(101, 0), Add(1, "html", {"content": "h"}))
    assert_ends_as_desired(area, desired, result)


def test_tie_keeps_the_earliest_block() -> None:
    result = align_area(live(("content", "a"), ("content", "a")), want(("content", "a")))
    assert result.ops == (Keep(100, 0), Delete(101))


def test_tie_prefers_fewer_deletes() -> None:
    # Keep one block unchanged and delete+add the rest (cost 3), or update two and add nothing: both have
    # k changes. Here: live [x, a], desired [a, y]. Option A: delete x, keep a, add y = 2 calls, 1 delete.
    # Option B: update x->a, update a->y = 2 calls, 0 deletes. B wins the tie.
    result = align_area(live(("content", "x"), ("content", "a")), want(("content", "a"), ("content", "y")))
    assert result.cost == 2
    assert not any(isinstance(op, Delete) for op in result.ops)


def test_fields_not_named_by_the_content_are_not_managed() -> None:
    area = [LiveBlock(7, "image", {"fID": "3", "altText": "", "lazyLoad": "0"})]
    assert align_area(area, [DesiredBlock("image", {"fID": "3"})]).ops == (Keep(7, 0),)
    assert align_area(area, [DesiredBlock("image", {"fID": "3", "altText": "Logo"})]).cost == 1


def test_custom_matcher() -> None:
    exact = align_area(
        [LiveBlock(7, "image", {"fID": "3", "altText": ""})],
        [DesiredBlock("image", {"fID": "3"})],
        matches=lambda a, b: dict(a) == dict(b),
    )
    assert exact.cost == 1


# --- optimality ----------------------------------------------------------------------------------------------

TYPES = st.sampled_from(["content", "html", "image"])
VALUES = st.fixed_dictionaries(
    {"content": st.sampled_from(["a", "b", "c"])}, optional={"alt": st.sampled_from(["", "x"])}
)


@st.composite
def areas(draw: st.DrawFn) -> tuple[list[LiveBlock], list[DesiredBlock]]:
    live_blocks = draw(st.lists(st.tuples(TYPES, VALUES), max_size=7))
    desired_blocks = draw(st.lists(st.tuples(TYPES, VALUES), max_size=7))
    return (
        [LiveBlock(id=10 + i, type=t, value=v) for i, (t, v) in enumerate(live_blocks)],
        [DesiredBlock(type=t, value=v) for t, v in desired_blocks],
    )


@settings(deadline=None)
@given(areas())
def test_alignment_is_optimal_and_correct(case: tuple[list[LiveBlock], list[DesiredBlock]]) -> None:
    area, desired = case
    result = align_area(area, desired)
    cost, deletes = brute_force(area, desired)
    assert result.cost == cost
    assert sum(isinstance(op, Delete) for op in result.ops) == deletes
    assert result.changed == (cost > 0)
    assert_ends_as_desired(area, desired, result)
    # Every live block is accounted for exactly once, in live order, before any add; adds come in desired order.
    live_ops = [op for op in result.ops if not isinstance(op, Add)]
    assert [op.live_id for op in live_ops] == [b.id for b in area]
    adds = [op for op in result.ops if isinstance(op, Add)]
    assert result.ops == (*live_ops, *adds)
    assert [a.index for a in adds] == list(range(len(desired) - len(adds), len(desired)))
    assert align_area(area, desired) == result  # deterministic


@settings(deadline=None)
@given(st.lists(st.tuples(TYPES, VALUES), max_size=7))
def test_aligning_an_area_with_itself_is_free(blocks: list[tuple[str, dict[str, str]]]) -> None:
    area = [LiveBlock(id=i, type=t, value=v) for i, (t, v) in enumerate(blocks)]
    result = align_area(area, [DesiredBlock(type=t, value=v) for t, v in blocks])
    assert result.ops == tuple(Keep(i, i) for i in range(len(blocks)))


@pytest.mark.parametrize("size", [50, 200])
def test_large_area_is_fast(size: int) -> None:
    area = [LiveBlock(id=i, type="content", value={"content": str(i)}) for i in range(size)]
    desired = [DesiredBlock(type="content", value={"content": str(i)}) for i in range(0, size, 2)]
    result = align_area(area, desired)
    assert result.cost == size - len(desired)


# --- placeholders (``- keep:``) -------------------------------------------------------------------------------


def keep(block_id: int, type_: str = "core_area_layout") -> DesiredBlock:
    return DesiredBlock(type=type_, value={}, keep_id=block_id)


def test_a_kept_block_is_never_touched_and_work_happens_around_it() -> None:
    area = [
        LiveBlock(100, "content", {"content": "a"}),
        LiveBlock(104, "core_area_layout", {}),
        LiveBlock(105, "content", {"content": "b"}),
    ]
    result = align_area(area, [DesiredBlock("content", {"content": "A"}), keep(104), *want(("content", "b"))])
    assert [type(op).__name__ for op in result.ops] == ["Update", "Keep", "Keep"]
    assert result.cost == 1


def test_a_kept_block_is_not_updated_even_when_values_differ() -> None:
    area = [LiveBlock(7, "gallery", {"x": "1"})]
    result = align_area(area, [DesiredBlock("gallery", {"x": "2"}, keep_id=7)])
    assert result.ops == (Keep(live_id=7, index=0),)


def test_removing_a_placeholder_deletes_the_block_once() -> None:
    area = [LiveBlock(104, "core_area_layout", {}), LiveBlock(105, "content", {"content": "b"})]
    result = align_area(area, want(("content", "b")))
    assert result.changes == (Delete(live_id=104),)


def test_a_new_block_before_a_kept_block_is_refused_not_planned_as_a_re_add() -> None:
    area = [LiveBlock(104, "core_area_layout", {})]
    with pytest.raises(AlignmentError, match="only appends"):
        align_area(area, [*want(("content", "new")), keep(104)])


def test_kept_blocks_cannot_be_reordered() -> None:
    area = [LiveBlock(1, "gallery", {}), LiveBlock(2, "gallery", {})]
    with pytest.raises(AlignmentError, match="order"):
        align_area(area, [keep(2, "gallery"), keep(1, "gallery")])


def brute_force_with_placeholders(area: Sequence[LiveBlock], desired: Sequence[DesiredBlock]) -> tuple[int, int] | None:
    """Like :func:`brute_force`, but a placeholder only matches its own live block, which is never deleted."""
    best: tuple[int, int] | None = None
    n, m = len(area), len(desired)
    pinned = {d.keep_id for d in desired if d.keep_id is not None}
    for k in range(min(n, m) + 1):
        if any(d.keep_id is not None for d in desired[k:]):
            continue  # a placeholder cannot be added
        for kept in combinations(range(n), k):
            if any(area[i].id in pinned for i in range(n) if i not in kept):
                continue  # a kept block cannot be deleted
            pairs = [(area[i], desired[t]) for t, i in enumerate(kept)]
            if any(a.type != d.type or (d.keep_id is not None and d.keep_id != a.id) for a, d in pairs):
                continue
            updates = sum(d.keep_id is None and not values_match(a.value, d.value) for a, d in pairs)
            candidate = (updates + (n - k) + (m - k), n - k)
            best = candidate if best is None else min(best, candidate)
    return best


@st.composite
def areas_with_placeholders(draw: st.DrawFn) -> tuple[list[LiveBlock], list[DesiredBlock]]:
    area, desired = draw(areas())
    # Turn some live blocks into kept ones: their placeholders go into the desired list, in live order, at
    # random places (so some cases are unreachable).
    chosen = [b for b in area if draw(st.booleans()) and draw(st.booleans())]
    placed = list(desired)
    position = 0
    for block in chosen:
        position = draw(st.integers(min_value=position, max_value=len(placed)))
        placed.insert(position, DesiredBlock(type=block.type, value={}, keep_id=block.id))
        position += 1
    return area, placed


@settings(deadline=None)
@given(areas_with_placeholders())
def test_alignment_with_placeholders_is_optimal_and_never_touches_kept_blocks(
    case: tuple[list[LiveBlock], list[DesiredBlock]],
) -> None:
    area, desired = case
    expected = brute_force_with_placeholders(area, desired)
    if expected is None:
        with pytest.raises(AlignmentError):
            align_area(area, desired)
        return
    result = align_area(area, desired)
    assert (result.cost, sum(isinstance(op, Delete) for op in result.ops)) == expected
    kept_ids = {d.keep_id for d in desired if d.keep_id is not None}
    for op in result.ops:
        if isinstance(op, Update | Delete):
            assert op.live_id not in kept_ids
    assert_ends_as_desired(area, [d if d.keep_id is None else DesiredBlock(d.type, {}) for d in desired], result)


# --- fast path: the same answer as the full search -----------------------------------------------------------

# Values that differ as strings but mean the same HTML (canonical_html), and values that really differ: the fast
# path compares the diagonal with the real matcher, so both kinds must reach it.
HTML_VALUES = st.sampled_from(["<p>a</p>", "<P>a</P>", "<p>a </p>", "<p>b</p>", "<p>a&amp;b</p>", "<p>a&b</p>", "a"])

EQUIVALENT = {"<p>a</p>": "<P>a</P>", "<P>a</P>": "<p>a </p>", "<p>a&amp;b</p>": "<p>a&b</p>"}
"""A value → another string with the same meaning (``same_html``)."""


@st.composite
def nearly_unchanged_areas(draw: st.DrawFn) -> tuple[list[LiveBlock], list[DesiredBlock]]:
    """An area and a desired list made from it with a few edits: equal (as HTML or as strings) most of the time,
    sometimes with a changed value or type, a block more or less, or placeholders for some of its blocks."""
    blocks = draw(st.lists(st.tuples(TYPES, HTML_VALUES), max_size=6))
    area = [LiveBlock(id=20 + i, type=t, value={"content": v}) for i, (t, v) in enumerate(blocks)]
    desired: list[DesiredBlock] = []
    unchanged = draw(st.booleans())  # then only edits that change nothing: the fast path's case
    edits = ["same", "equivalent", "keep"] if unchanged else ["same", "value", "type", "drop", "keep", "keep-other"]
    for block in area:
        edit = draw(st.sampled_from(edits))
        if edit == "same":
            desired.append(DesiredBlock(block.type, dict(block.value)))
        elif edit == "equivalent":
            desired.append(
                DesiredBlock(block.type, {"content": EQUIVALENT.get(block.value["content"], block.value["content"])})
            )
        elif edit == "value":
            desired.append(DesiredBlock(block.type, {"content": draw(HTML_VALUES)}))
        elif edit == "type":
            desired.append(DesiredBlock(draw(TYPES), dict(block.value)))
        elif edit == "keep":
            desired.append(DesiredBlock(block.type, {}, keep_id=block.id))
        elif edit == "keep-other" and area:
            other = draw(st.sampled_from(area))
            desired.append(DesiredBlock(other.type, {}, keep_id=other.id))
    if draw(st.booleans()) and draw(st.booleans()):
        desired.append(DesiredBlock(draw(TYPES), {"content": draw(HTML_VALUES)}))
    return area, desired


@settings(deadline=None)
@given(nearly_unchanged_areas())
def test_the_fast_path_gives_what_the_full_search_gives(case: tuple[list[LiveBlock], list[DesiredBlock]]) -> None:
    area, desired = case
    try:
        expected = search_area(area, desired, values_match)
    except AlignmentError as exc:
        with pytest.raises(AlignmentError, match=re.escape(str(exc))):
            align_area(area, desired)
        return
    assert align_area(area, desired) == expected


@pytest.mark.parametrize(("value", "same"), EQUIVALENT.items())
def test_the_equivalent_values_of_the_property_test_match(value: str, same: str) -> None:
    assert value != same
    assert values_match({"content": value}, {"content": same})


def test_an_area_equal_as_html_but_not_as_strings_needs_nothing() -> None:
    area = live(("content", "<P>one</P>"), ("content", "<p>two  words</p>"))
    result = align_area(area, want(("content", "<p>one</p>"), ("content", "<p>two words</p>")))
    assert result.ops == (Keep(100, 0), Keep(101, 1))


@pytest.mark.parametrize("size", [1, 5, 12])
def test_each_pair_of_values_is_compared_at_most_once(size: int) -> None:
    area = [LiveBlock(id=i, type="content", value={"content": f"live {i}"}) for i in range(size)]
    desired = [DesiredBlock(type="content", value={"content": f"wanted {i}"}) for i in range(size)]
    calls: list[tuple[str, str]] = []

    def counting(a: Mapping[str, str], b: Mapping[str, str]) -> bool:
        calls.append((a["content"], b["content"]))
        return values_match(a, b)

    result = align_area(area, desired, matches=counting)
    assert result.cost == size  # every block updated in place
    assert len(calls) == len(set(calls)) <= size * size
