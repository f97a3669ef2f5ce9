"""The contract every kind passes, built-in or added (issue 33): each kind module of ``cmssync.sync.kinds`` — the
built-in ones and the test kinds of ``tests/support/added_kinds`` put on the package's path — is one module named for
its kind that brings its applier, its precondition check, its planner (or the kind whose planner plans it), a pull
hook exactly when pull lists it, a scope rule that answers only for its own files, and ids that its own scope holds.
``tests/sync/test_kind_contract_site.py`` runs the built-in kinds and the toy kind through one contract against the
sandbox."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cmssync.errors import PlanError
from cmssync.plan.snapshot import Snapshot
from cmssync.state.store import StateStore
from cmssync.sync.kinds import Registry, discover
from cmssync.sync.plan_files import check_fresh, read_plan_file
from tests.support.added_kinds import install

BUILT_IN = ("group", "file", "page", "stack", "user")
ADDED = ("team", "toy")


@pytest.fixture(scope="module")
def kinds() -> Iterator[Registry]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        for name in ADDED:
            install(monkeypatch, name)
        yield discover()


@pytest.mark.parametrize("name", [*BUILT_IN, *ADDED])
def test_a_kind_is_one_module_named_for_it(kinds: Registry, name: str) -> None:
    module = sys.modules[f"cmssync.sync.kinds.{name}"]  # found by listing the package
    assert Path(inspect.getfile(module)).stem == name
    assert module.KIND.name == name
    assert kinds[name].stale is not None  # a saved plan's action of it is checked before it is applied


@pytest.mark.parametrize("name", [*BUILT_IN, *ADDED])
def test_a_kind_is_observed_and_planned_in_the_loops(kinds: Registry, name: str) -> None:
    kind = kinds[name]
    facts = kind.facts
    if facts.recorded_as is not None:  # planned and read as another kind's objects (a stack as its page)
        assert facts.recorded_as("x") != "x"
        assert facts.plan is None
        return
    assert facts.plan is not None  # the planner's loop runs it
    assert kind.read is not None  # the observer's loop runs it
    if kind.observe is not None:  # an added kind's own observer and planner, joined to the loops by the registry
        assert kind.plan is not None
        assert facts.keys is not None


@pytest.mark.parametrize("name", [*BUILT_IN, *ADDED])
def test_a_kind_is_pulled_exactly_when_pull_lists_it(kinds: Registry, name: str) -> None:
    kind = kinds[name]
    assert (kind.pull is not None) == (kind.facts.pull_rank is not None)
    assert (name in kinds.table.pulled) == (kind.pull is not None)


@pytest.mark.parametrize("name", [*BUILT_IN, *ADDED])
def test_a_kinds_scope_holds_its_own_objects(kinds: Registry, name: str) -> None:
    facts = kinds.table[name]
    key = "/about" if name == "page" else "about"
    object_id = facts.id_of(key)
    assert object_id.startswith(f"{name}:")
    assert kinds.table.in_scope(facts.scoped(frozenset({key})), object_id)
    assert not kinds.table.in_scope(facts.scoped(frozenset({key + "-other"})), object_id)
    if facts.scope is not None:
        assert facts.scope("cmssync.yaml") is None  # the settings are no kind's: a full run


def test_the_kinds_are_in_plan_order_and_delete_in_one_order(kinds: Registry) -> None:
    assert kinds.names == (*BUILT_IN, *ADDED)
    ranks = [kind.facts.delete_rank for kind in kinds if kind.facts.delete_rank is not None]
    assert len(ranks) == len(set(ranks))
    assert set(kinds.handlers()) == set(kinds.names)


def test_a_saved_plan_of_before_is_refused_for_an_added_kinds_action_without_its_desired_form(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A plan file written before added kinds' actions carried their desired form (cmssync at e3c9d7a, ``team``
    registered) loads, and its ``team`` create is refused by name instead of reaching an applier that writes from
    ``Action.form``."""
    formats = Path(__file__).parent / "formats"
    plan = read_plan_file(formats / "plan.json")
    install(monkeypatch, "team")
    state = StateStore(formats / "state.json").load()
    with pytest.raises(PlanError, match="stale: team Team Translators carries no desired form"):
        check_fresh(plan, None, Snapshot(site_url=plan.site, home_page_id=1), state, discover())
