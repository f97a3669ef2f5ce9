"""``--target`` of a file whose bytes changed re-points the pages that link to it (issue 15 follow-up).

A replace uploads the new bytes and deletes the old file once the pages are re-pointed. A targeted plan used to
hold only the file, so ``/services`` kept linking to the deleted copy: its link broke, and the next whole-site plan
found the page to update. Now the pages linking to a replaced target are planned with it (and named in a
warning), as the whole-site plan does.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.plan.request import PlanRequest
from cmssync.plan.scope import scope_for_targets
from cmssync.plan.scope_model import Scope
from cmssync.state.store import StateStore
from tests.support.rawsite import RawSite
from tests.support.sites import Site, copy_example

PRICES = "documents/price-list.txt"
TARGET = (f"file:{PRICES}",)


@pytest.fixture
def site(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Site:
    root = copy_example(tmp_path / "site", monkeypatch)
    site = Site(root, sandbox)
    assert not asyncio.run(site.apply()).failed, site.last_output
    return site


def _file_id(site: Site) -> str:
    return str(StateStore(site.state_path).load().files[PRICES].id)


def _price_links(sandbox: Sandbox) -> str:
    raw = RawSite(sandbox)
    try:
        blocks = raw.blocks("/services", "Main")
    finally:
        raw.close()
    return " ".join(str(value) for _kind, value in blocks if "price list" in str(value))


def test_a_targeted_replace_plans_and_applies_the_linking_pages(site: Site) -> None:
    old_id = _file_id(site)
    (site.root / "files" / PRICES).write_text("Consulting: 100 per hour\nTraining: 900 per day\n")
    workspace = site.workspace()
    scope = scope_for_targets(workspace.content, workspace.load_state(), TARGET, prune=False, replace_moved=False)
    assert isinstance(scope, Scope)
    assert "/services" in scope.pages

    plan = asyncio.run(site.plan(targets=TARGET))
    assert {a.id: a.op for a in plan.actions} == {f"file:{PRICES}": "replace", "page:/services": "update"}
    assert plan.by_id()["page:/services"].depends_on == (f"file:{PRICES}",)
    assert any(f"file {PRICES} is replaced" in w and "/services" in w for w in plan.warnings), plan.warnings
    assert plan.header is not None
    assert plan.header.options["targets"] == list(TARGET)

    report = asyncio.run(site.apply(targets=TARGET))
    assert not report.failed, site.last_output
    assert not report.problems, site.last_output
    new_id = _file_id(site)
    assert new_id != old_id
    raw = RawSite(site.sandbox)
    try:
        old = raw.http.get(f"/files/{old_id}")
    finally:
        raw.close()
    assert old.status_code in (400, 404), old.text  # the old copy was deleted ...
    assert "price list" in _price_links(site.sandbox)
    # ... and nothing links to it any more: the whole-site plan has nothing left for /services (or anything)
    assert asyncio.run(site.plan()).actions == ()


def test_a_targeted_metadata_change_does_not_widen_the_plan(site: Site) -> None:
    sidecar = site.root / "files" / f"{PRICES}.yaml"
    sidecar.write_text(sidecar.read_text().replace("Price list 2026", "Price list 2027"))
    (site.root / "pages" / "services.yaml").write_text(
        (site.root / "pages" / "services.yaml").read_text().replace("Questions?", "Any questions?")
    )
    plan = asyncio.run(site.plan(targets=TARGET))
    assert {a.id: a.op for a in plan.actions} == {f"file:{PRICES}": "update"}
    assert not any("is replaced" in w for w in plan.warnings)


def test_the_whole_site_plan_of_a_replace_also_updates_the_linking_page(site: Site) -> None:
    """The reference the targeted plan now matches."""
    (site.root / "files" / PRICES).write_text("Consulting: 100 per hour\n")
    whole = asyncio.run(site.plan())
    targeted = asyncio.run(site.plan(targets=TARGET))
    assert {a.id for a in targeted.actions} == {a.id for a in whole.actions} == {f"file:{PRICES}", "page:/services"}
    assert PlanRequest(targets=TARGET).targets == TARGET
