"""Which sub-areas of layouts and containers can be written so that the page shows them (cmssync.plan.subareas)."""

from __future__ import annotations

import pytest

from cmssync.plan.blocks import LiveBlock
from cmssync.plan.snapshot import LivePage
from cmssync.plan.subareas import SubArea, is_sub_area, sub_area, unwritable, writable_areas


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Main", None),
        ("Page Header", None),
        ("Main : 16", SubArea("Main", 16, None)),
        ("Main : 10 : Title", SubArea("Main", 10, "Title")),
        ("Main : 2 : Column 1", SubArea("Main", 2, "Column 1")),
        ("Main : 10 : Body : 11 : Item 1", SubArea("Main : 10 : Body", 11, "Item 1")),
        ("Page Footer : 1 : Body", SubArea("Page Footer", 1, "Body")),
        ("Main : x : Title", None),
    ],
)
def test_names(name: str, expected: SubArea | None) -> None:
    assert sub_area(name) == expected
    assert is_sub_area(name) is (expected is not None)


LIVE = {
    "Main": ["core_container", "core_area_layout", "content"],
    "Main : 10 : Title": ["content"],
    "Main : 10 : Body": ["core_container"],
    "Main : 10 : Body : 11 : Item 1": ["feature"],
    "Main : 16": ["content"],
}


@pytest.mark.parametrize("name", ["Main", "Main : 10 : Title", "Main : 10 : Body : 11 : Item 1", "Main : 16"])
def test_listed_sub_areas_with_their_container_are_writable(name: str) -> None:
    assert unwritable(name, LIVE, known=()) is None


def test_a_sub_area_no_container_has_is_refused_unless_seen_before() -> None:
    assert "no layout or container on the page has the sub-area 'Main : 99 : Item 1'" in str(
        unwritable("Main : 99 : Item 1", LIVE, known=())
    )
    # Emptied by cmssync: no longer listed (the API lists areas holding blocks), but its container is there.
    assert unwritable("Main : 10 : Footer", LIVE, known={"Main : 10 : Footer"}) is None


@pytest.mark.parametrize(
    ("gone", "name", "what"),
    [("core_area_layout", "Main : 16", "layout"), ("core_container", "Main : 10 : Title", "container")],
)
def test_a_sub_area_whose_kind_of_holder_is_gone_is_refused(gone: str, name: str, what: str) -> None:
    live = {**LIVE, "Main": [t for t in LIVE["Main"] if t != gone]}
    reason = unwritable(name, live, known=())
    assert reason is not None
    assert reason.startswith(f"the {what} that showed sub-area {name!r} is no longer in area 'Main'")


def test_writable_areas_drops_refused_areas_and_warns_where_blocks_are() -> None:
    page = LivePage(
        id=2,
        path="/p",
        name="P",
        description="",
        type="page",
        template="full",
        areas={name: tuple(LiveBlock(i, t, {}) for i, t in enumerate(types)) for name, types in LIVE.items()},
    )
    warnings: list[str] = []
    kept = writable_areas("/p", {"Main : 16": [1], "Main : 99 : A": [2], "Main : 98 : B": []}, page, (), warnings)
    assert kept == {"Main : 16": [1]}
    assert len(warnings) == 1  # the empty refused area has nothing to say
    assert warnings[0].startswith("page /p, area Main : 99 : A: no layout or container")
