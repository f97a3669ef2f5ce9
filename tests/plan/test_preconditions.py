"""Each built-in kind's check of a saved plan's action against the site now (``cmssync.plan.preconditions``), as
``cmssync.sync.kinds`` registers them; ``tests/sync/test_adoption_rules.py`` checks them through ``check_fresh``."""

from __future__ import annotations

from dataclasses import replace

from cmssync.plan.actions import Action, Precondition
from cmssync.plan.preconditions import stale_file, stale_page, stale_user
from cmssync.plan.snapshot import LiveGroup
from cmssync.state.records import State
from cmssync.sync.kinds import discover
from cmssync.sync.kinds.group import stale_group
from tests.sync.sitebuilder import page, snapshot


def test_every_built_in_kind_brings_its_check() -> None:
    assert {kind.name: kind.stale for kind in discover() if kind.plan is None} == {
        "group": stale_group,
        "file": stale_file,
        "page": stale_page,
        "stack": stale_page,
        "user": stale_user,
    }


def test_a_stack_is_checked_at_its_page() -> None:
    footer = page(7, "/!stacks/footer", "Footer", live=3)
    update = Action(
        kind="stack", key="footer", op="update", precondition=Precondition(remote_id="7", live_version_id=3)
    )
    assert stale_page(update, snapshot(footer), State()) is None
    moved_on = snapshot(page(7, "/!stacks/footer", "Footer", live=4))
    assert stale_page(update, moved_on, State()) == "was published since (live version 4, the plan expected 3)"
    assert stale_page(update, snapshot(), State()) == "(id 7) no longer exists on the site"
    create = Action(kind="stack", key="footer", op="create", precondition=Precondition(absent=True))
    assert stale_page(create, snapshot(footer), State()) == (
        "exists on the site now (page id 7), and the plan was made to create it"
    )


def test_a_group_create_is_stale_once_the_group_exists() -> None:
    create = Action(kind="group", key="Newsroom", op="create", precondition=Precondition(absent=True))
    assert stale_group(create, snapshot(), State()) is None
    now = replace(snapshot(), groups={"Newsroom": LiveGroup(12, "Newsroom")})
    assert (
        stale_group(create, now, State()) == "exists on the site now (group id 12), and the plan was made to create it"
    )
