"""An incremental run after ``users.yaml`` changed reads the users it can change, not the whole user list.

The daemon's scope for a ``users.yaml`` change holds every user (``scope_for_paths``); planning narrows it to the
users whose content differs from what was last applied (``with_changed_users``), read by their state id.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.plan.request import PlanRequest
from cmssync.plan.scope import scope_for_paths
from cmssync.sync.planning import make_plan
from tests.support.sites import pulled_site, requests_by_route


def _set_email(users_file: Path, name: str, email: str) -> None:
    text = users_file.read_text()
    start = text.index("email: ", text.index(f"username: {name}\n"))
    users_file.write_text(text[:start] + f"email: {email}" + text[text.index("\n", start) :])


@pytest.mark.slow
async def test_a_users_file_change_reads_only_the_changed_users(tmp_path: Path, sandbox: Sandbox) -> None:
    site = await pulled_site(tmp_path, sandbox, "pages=10,blocks=1,files=0,users=300")
    users_file = site.root / "users.yaml"
    names = sorted(site.workspace().content.users)
    scope = scope_for_paths(["users.yaml"])
    assert scope is not None
    assert scope.all_users

    # users.yaml saved with no change to any user: no user is read at all
    users_file.write_text("# reordered by an editor\n" + users_file.read_text())
    sandbox.clear_stats()
    run = await make_plan(site.workspace(), PlanRequest(scope=scope))
    assert run.plan.actions == ()
    assert not {route for route in requests_by_route(sandbox) if "/users" in route}, requests_by_route(sandbox)

    # two users edited: those two, each by its state id
    _set_email(users_file, names[3], "three@changed.example.com")
    _set_email(users_file, names[250], "many@changed.example.com")
    sandbox.clear_stats()
    run = await make_plan(site.workspace(), PlanRequest(scope=scope))
    assert sorted((a.key, a.op) for a in run.plan.actions) == sorted([(names[3], "update"), (names[250], "update")])
    assert {route: n for route, n in requests_by_route(sandbox).items() if "/users" in route} == {"GET /users/{uID}": 2}

    # the same plan as a full run's for those users
    whole = await make_plan(site.workspace())
    assert [a for a in whole.plan.actions if a.kind == "user"] == list(run.plan.actions)
