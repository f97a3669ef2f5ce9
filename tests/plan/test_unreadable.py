"""``plan.unreadable.hold_unreadable``: what an unreadable object holds back, and what it leaves planned (pure).

The sandbox tests (``tests/reliability/test_unreadable_isolated.py``) show the whole run. These pin the rules on
a hand-made plan: the object, creates below it and moves into or out of it, everything depending on a held action
(transitively), the replace of a file a held page links to (and the other pages waiting for that replace), and
nothing else.
"""

from __future__ import annotations

from cmssync.plan.actions import Action, FieldChange, Plan, Precondition
from cmssync.plan.snapshot import Snapshot
from cmssync.plan.unreadable import hold_unreadable
from cmssync.state.records import PageRecord, State

REASON = "page /about (id 7): the page tree lists it but it cannot be read (GET /pages/7 (403): no access)"


def _page(key: str, op: str = "update", *, depends: tuple[str, ...] = (), remote: str | None = None) -> Action:
    return Action(
        kind="page",
        key=key,
        op=op,  # type: ignore[arg-type]
        depends_on=depends,
        precondition=Precondition(remote_id=remote, absent=op == "create"),
    )


def _plan(*actions: Action) -> Plan:
    return Plan(site="http://site", content_digest="sha256:0", actions=actions)


def _held(plan: Plan) -> dict[str, str]:
    return {entry.id: entry.message for entry in plan.held}


STATE = State(pages={"/about": PageRecord(id=7), "/old": PageRecord(id=9)})
SNAPSHOT = Snapshot(site_url="http://site", home_page_id=1, unreadable={"page:/about": REASON})


def test_nothing_unreadable_leaves_the_plan_as_it_is() -> None:
    plan = _plan(_page("/about", remote="7"))
    assert hold_unreadable(plan, Snapshot(site_url="http://site", home_page_id=1), STATE) is plan


def test_the_object_and_what_needs_it_are_held_the_rest_planned() -> None:
    move_in = Action(
        kind="page",
        key="/about/old",
        op="move",
        changes=(FieldChange(field="path", before="/old", after="/about/old"),),
        precondition=Precondition(remote_id="9"),
    )
    plan = _plan(
        _page("/about", remote="7"),
        _page("/about/history", "create"),
        _page("/about/history/1999", "create", depends=("page:/about/history",)),
        _page("/", remote="1", depends=("page:/about/history",)),
        move_in,
        _page("/contact", remote="3"),
        _page("/about/team", remote="8"),  # an existing child: readable, written on its own
    )
    result = hold_unreadable(plan, SNAPSHOT, STATE)
    assert [a.id for a in result.actions] == ["page:/contact", "page:/about/team"]
    held = _held(result)
    assert held["page:/about"] == REASON
    assert held["page:/about/history"].startswith("it is below page /about, which cannot be read")
    assert held["page:/about/history/1999"].startswith("it is below page /about, which cannot be read")
    assert held["page:/"] == "it needs page /about/history, which is held back (see there)"
    assert held["page:/about/old"].startswith("it is below page /about")
    assert all(entry.reason == "unreadable" and entry.fails for entry in result.held)
    assert result.held[0].action == plan.actions[0]  # what would have been applied, for review
    assert len(result.refused) == len(result.unreadable) == 5


def test_a_page_moved_away_is_found_by_its_id_and_a_link_needing_it_is_held() -> None:
    moved = Action(
        kind="page",
        key="/team",
        op="move",
        changes=(FieldChange(field="path", before="/about", after="/team"),),
        precondition=Precondition(remote_id="7"),
    )
    linking = _page("/contact", remote="3", depends=("page:/about",))
    parent_delete = _page("/old", "delete", remote="9", depends=("page:/about",))
    result = hold_unreadable(_plan(moved, linking, parent_delete), SNAPSHOT, STATE)
    assert result.actions == ()
    held = _held(result)
    assert held["page:/team"].startswith("it is page /about, which cannot be read")
    assert held["page:/contact"].startswith("it needs page /about, which cannot be read")
    assert held["page:/old"].startswith("it needs page /about, which cannot be read")


def test_an_unreadable_object_with_nothing_planned_is_still_listed() -> None:
    result = hold_unreadable(_plan(_page("/contact", remote="3")), SNAPSHOT, STATE)
    assert [a.id for a in result.actions] == ["page:/contact"]
    assert list(_held(result)) == ["page:/about"]
    assert not result.is_empty


def test_a_file_replace_is_held_while_a_page_linking_to_it_is() -> None:
    replace = Action(kind="file", key="docs/prices.txt", op="replace", precondition=Precondition(remote_id="abc"))
    about = _page("/about", remote="7", depends=("file:docs/prices.txt",))
    contact = _page("/contact", remote="3", depends=("file:docs/prices.txt",))
    other = Action(kind="file", key="docs/other.txt", op="replace", precondition=Precondition(remote_id="def"))
    result = hold_unreadable(_plan(replace, other, about, contact), SNAPSHOT, STATE)
    assert [a.id for a in result.actions] == ["file:docs/other.txt"]
    held = _held(result)
    assert held["file:docs/prices.txt"].startswith("page /about links to it and is held back")
    assert held["page:/contact"] == "it needs file docs/prices.txt, which is held back (see there)"


def test_an_unreadable_file_is_never_uploaded_again() -> None:
    snapshot = Snapshot(site_url="http://site", home_page_id=1, unreadable={"file:docs/prices.txt": "403"})
    upload = Action(kind="file", key="docs/prices.txt", op="create", precondition=Precondition(absent=True))
    page = _page("/contact", remote="3", depends=("file:docs/prices.txt",))
    result = hold_unreadable(_plan(upload, page), snapshot, State())
    assert result.actions == ()
    assert set(_held(result)) == {"file:docs/prices.txt", "page:/contact"}
