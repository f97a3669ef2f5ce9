"""The event tracker: one event per change of state, none for a run that changes nothing."""

from __future__ import annotations

from types import SimpleNamespace

from cmssync.daemon.events import EventTracker, RunFacts, conflicted_objects
from cmssync.plan.actions import Action, BlockedDeletes, FieldChange, Plan
from cmssync.plan.scope_model import Scope
from cmssync.sync.engine import Outcome


def drifted(key: str, live: str = "Edited on the site") -> Action:
    return Action(
        kind="page", key=key, op="update", drift=True, changes=(FieldChange(field="name", before=live, after="Ours"),)
    )


def pending(key: str, op: str = "update", after: str = "New") -> Action:
    return Action(kind="page", key=key, op=op, changes=(FieldChange(field="name", before="Old", after=after),))  # type: ignore[arg-type]


def plan(*actions: Action, blocked: tuple[BlockedDeletes, ...] = ()) -> Plan:
    return Plan(site="http://site", content_digest="x", actions=actions, blocked=blocked)


def run(
    the_plan: Plan | None = None,
    *,
    mode: str = "report",
    result: str = "success",
    scope: Scope | None = None,
    outcomes: tuple[Outcome, ...] = (),
    reason: str = "",
    problems: tuple[str, ...] = (),
) -> RunFacts:
    return RunFacts(
        run_id="r1",
        trigger="schedule",
        mode=mode,
        scope=scope,
        result=result,
        reason=reason,
        problems=problems,
        plan=the_plan,
        outcomes=outcomes,
    )


def types(events: list) -> list[str]:  # type: ignore[type-arg]
    return [event.type for event in events]


def test_the_same_drift_seen_by_ten_runs_is_one_event() -> None:
    tracker = EventTracker()
    first = tracker.observe(run(plan(drifted("/about"))))
    assert types(first) == ["drift_found"]
    assert [o.id for o in first[0].objects] == ["page:/about"]
    assert first[0].objects[0].fields == ("name",)
    for _ in range(9):
        assert tracker.observe(run(plan(drifted("/about")))) == []


def test_a_new_drifted_object_is_another_event_naming_only_it() -> None:
    tracker = EventTracker()
    tracker.observe(run(plan(drifted("/about"))))
    events = tracker.observe(run(plan(drifted("/about"), drifted("/team"))))
    assert types(events) == ["drift_found"]
    assert [o.id for o in events[0].objects] == ["page:/team"]
    assert events[0].total == 2


def test_the_same_page_edited_again_on_the_site_is_news() -> None:
    tracker = EventTracker()
    tracker.observe(run(plan(drifted("/about", "first edit"))))
    assert types(tracker.observe(run(plan(drifted("/about", "second edit"))))) == ["drift_found"]


def test_drift_that_went_away_and_came_back_is_news() -> None:
    tracker = EventTracker()
    tracker.observe(run(plan(drifted("/about"))))
    assert tracker.observe(run(plan())) == []
    assert types(tracker.observe(run(plan(drifted("/about"))))) == ["drift_found"]


def test_an_incremental_run_updates_only_its_scope() -> None:
    tracker = EventTracker()
    tracker.observe(run(plan(drifted("/about"), drifted("/team"))))
    # A file run about /team sees it clean; /about is outside its scope and stays drifted (no new event for it).
    assert tracker.observe(run(plan(), scope=Scope(pages=frozenset({"/team"})))) == []
    assert set(tracker.drifted.current) == {"page:/about"}
    assert types(tracker.observe(run(plan(drifted("/team")), scope=Scope(pages=frozenset({"/team"}))))) == [
        "drift_found"
    ]


def test_pending_changes_are_keyed_by_operation_not_by_every_save() -> None:
    tracker = EventTracker()
    assert types(tracker.observe(run(plan(pending("/about", after="v1"))))) == ["changes_pending"]
    assert tracker.observe(run(plan(pending("/about", after="v2")))) == []
    assert types(tracker.observe(run(plan(pending("/about", op="delete"))))) == ["changes_pending"]


def test_failures_notify_once_and_recovery_once() -> None:
    tracker = EventTracker()
    assert tracker.observe(run(plan())) == []  # a first success is no recovery
    failed = tracker.observe(run(None, result="failure", reason="invalid content", problems=("pages/a.yaml:1:1: x",)))
    assert types(failed) == ["run_failed"]
    assert failed[0].problems == ("pages/a.yaml:1:1: x",)
    for _ in range(5):
        assert (
            tracker.observe(run(None, result="failure", reason="invalid content", problems=("pages/a.yaml:1:1: x",)))
            == []
        )
    assert types(tracker.observe(run(None, result="failure", reason="site unreachable"))) == ["run_failed"]
    recovered = tracker.observe(run(plan()))
    assert types(recovered) == ["recovered"]
    assert "after 7 failed runs" in recovered[0].summary
    assert tracker.observe(run(plan())) == []


def test_an_interrupted_run_is_neither_failure_nor_recovery() -> None:
    tracker = EventTracker()
    assert tracker.observe(run(None, result="interrupted", reason="stopping")) == []
    assert tracker.failures == 0


def test_enforce_mode_reports_reverted_drift_once_per_edit() -> None:
    tracker = EventTracker()
    action = drifted("/about")
    done = (Outcome(action, "ok"),)
    events = tracker.observe(run(plan(action), mode="enforce", outcomes=done))
    assert types(events) == ["drift_reverted"]
    # A revert that does not stick (same live values every run) is reported once.
    assert tracker.observe(run(plan(action), mode="enforce", outcomes=done)) == []
    # A clean run, then the editor makes the same edit again: news.
    assert tracker.observe(run(plan(), mode="enforce")) == []
    assert types(tracker.observe(run(plan(action), mode="enforce", outcomes=done))) == ["drift_reverted"]


def test_a_failed_revert_is_a_failure_and_its_later_success_a_revert() -> None:
    tracker = EventTracker()
    action = drifted("/about")
    failed = tracker.observe(
        run(
            plan(action),
            mode="enforce",
            result="failure",
            reason="apply failed",
            outcomes=(Outcome(action, "failed", "500"),),
        )
    )
    assert types(failed) == ["run_failed"]
    assert [o.id for o in failed[0].objects] == ["page:/about"]
    assert types(tracker.observe(run(plan(action), mode="enforce", outcomes=(Outcome(action, "ok"),)))) == [
        "recovered",
        "drift_reverted",
    ]


def test_blocked_deletes_notify_once_per_set() -> None:
    tracker = EventTracker()
    guard = BlockedDeletes(kind="page", keys=("/a", "/b"), managed=4, guard="max_fraction", limit="max_fraction=0.25")
    events = tracker.observe(run(plan(blocked=(guard,)), mode="enforce"))
    assert types(events) == ["deletes_blocked"]
    assert events[0].total == 2
    assert "refusing to delete 2 of 4 managed pages" in events[0].summary
    assert tracker.observe(run(plan(blocked=(guard,)), mode="enforce")) == []
    # Incremental runs never plan deletes: they leave the blocked set alone.
    assert tracker.observe(run(plan(), mode="enforce", scope=Scope(pages=frozenset({"/a"})))) == []
    assert set(tracker.blocked.current) == {"page:/a", "page:/b"}


def test_conflicts_are_read_from_the_plan_when_it_carries_them() -> None:
    entries = [
        SimpleNamespace(kind="page", key="/about", field="name"),
        SimpleNamespace(kind="page", key="/about", field="Main#1"),
    ]
    the_plan = SimpleNamespace(conflicts=entries)
    found = conflicted_objects(the_plan)  # type: ignore[arg-type]
    assert list(found) == ["page:/about"]
    assert found["page:/about"].fields == ("name", "Main#1")
    assert conflicted_objects(plan()) == {}


def test_a_mode_change_starts_the_mode_states_afresh() -> None:
    tracker = EventTracker()
    tracker.observe(run(plan(drifted("/about"))))
    tracker.observe(run(plan(), mode="enforce"))
    assert types(tracker.observe(run(plan(drifted("/about"))))) == ["drift_found"]


def test_an_object_of_another_locale_tree_names_its_tree() -> None:
    multilingual = Plan(
        site="http://site",
        content_digest="x",
        actions=(drifted("/de/about"), drifted("/about")),
        trees={"/": "en_US", "/de": "de_DE"},
    )
    events = EventTracker().observe(run(multilingual))
    assert sorted((o.id, o.tree) for o in events[0].objects) == [("page:/about", "en_US"), ("page:/de/about", "de_DE")]
    assert [o.tree for o in EventTracker().observe(run(plan(drifted("/about"))))[0].objects] == [None]
