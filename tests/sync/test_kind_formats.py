"""A state file and a plan file written before kinds became modules found per run (cmssync at e3c9d7a, with a kind
``team`` registered; ``tests/sync/formats/``) load unchanged: every kind's records are where they were, the plan's
actions keep their kinds, and a saved plan's action of a kind this run does not manage is refused by name, never
applied by another kind's handler."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cmssync.errors import PlanError
from cmssync.plan.snapshot import Snapshot
from cmssync.state.store import StateStore
from cmssync.sync.kinds import discover
from cmssync.sync.plan_files import check_fresh, read_plan_file
from tests.support.added_kinds import install

FORMATS = Path(__file__).parent / "formats"


def test_a_state_file_of_before_loads_with_every_kinds_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(FORMATS / "state.json", tmp_path / "state.json")
    state = StateStore(tmp_path / "state.json").load()
    install(monkeypatch, "team")
    kinds = discover()
    assert kinds.table.shared_bindings(state) == []
    ids = {kind.name: set(kind.facts.records_in(state)) for kind in kinds if kind.facts.recorded_as is None}
    assert ids == {
        "group": {"Editors"},
        "file": {"a.pdf"},
        "page": {"/", "/about"},
        "user": {"jane"},
        "team": {"Team Translators"},
    }


def test_a_plan_file_of_before_loads_and_an_unmanaged_kinds_action_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = read_plan_file(FORMATS / "plan.json")
    assert [(a.kind, a.key, a.op) for a in plan.actions] == [
        ("group", "Editors", "create"),
        ("team", "Team Translators", "create"),
        ("user", "jane", "delete"),
    ]
    snapshot = Snapshot(site_url=plan.site, home_page_id=1)
    state = StateStore(FORMATS / "state.json").load()
    with pytest.raises(PlanError, match="team Team Translators is of a kind this installation does not manage"):
        check_fresh(plan, None, snapshot, state, discover())
