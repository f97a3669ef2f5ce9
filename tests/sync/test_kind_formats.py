"""A state file and a plan file written before kinds became modules found per run (cmssync at e3c9d7a, with a kind
``team`` registered; ``tests/sync/formats/``) load unchanged: every kind's records are where they were, the plan's
actions keep their kinds, and a saved plan's action of a kind this run does not manage is refused by name, never
applied by another kind's handler."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from cmssync.errors import PlanError
from cmssync.plan.snapshot import Snapshot
from cmssync.state.records import KindRecord
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


def test_a_state_file_of_before_is_written_back_byte_for_byte_with_or_without_group_records(tmp_path: Path) -> None:
    """The group kind's records live in ``State.kinds`` with every other kind's, and the state file keeps them where
    it did (``groups``, each record its id alone; an empty map when there is none): nothing to migrate, either way."""
    before = (FORMATS / "state.json").read_text(encoding="utf-8")
    before = before.replace('"/ccm/api/1.0"\n', '"/ccm/api/1.0",\n  "probe_page": null\n')  # a field added since
    without = re.sub(r'"groups": \{\n.*?\n \},', '"groups": {},', before, flags=re.DOTALL)
    assert without != before
    for text, groups in ((before, {"Editors": KindRecord(id=5)}), (without, {})):
        (tmp_path / "state.json").write_text(text, encoding="utf-8")
        state = StateStore(tmp_path / "state.json").load()
        assert (state.records_of("group"), set(state.kinds)) == (groups, {"team", *(["group"] if groups else [])})
        StateStore(tmp_path / "again.json").save(state)
        assert (tmp_path / "again.json").read_text(encoding="utf-8") == text


def test_a_group_record_is_journaled_under_its_map_and_read_back(tmp_path: Path) -> None:
    shutil.copy(FORMATS / "state.json", tmp_path / "state.json")
    store = StateStore(tmp_path / "state.json")
    state = store.load()
    state.record("group", "Writers", KindRecord(id=8))
    state.forget("group", "Editors")
    store.save(state)
    header, *entries = (json.loads(line) for line in store.journal_path.read_text(encoding="utf-8").splitlines())
    assert header == {"format_version": 1}
    assert [(entry["kind"], entry["key"], entry["record"]) for entry in entries] == [
        ("groups", "Editors", None),
        ("groups", "Writers", {"id": 8}),
    ]
    assert StateStore(tmp_path / "state.json").load().records_of("group") == {"Writers": KindRecord(id=8)}
