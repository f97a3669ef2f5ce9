"""Tie reads (issue 28 item 3): files and users whose dates tie in a group that fits a list page are read by the
list walk (a cursor before the group), users a walk skipped a list page at a time; only groups longer than a page
cost one request per object, counted in the plan (``tie_reads``, with its cause in ``--format json``)."""

from __future__ import annotations

import json
from pathlib import Path

from cmssync.emulator.embedded import Sandbox
from cmssync.render.text import render_json
from cmssync.sync.planning import make_plan
from tests.support.sites import pulled_site, requests_by_route


async def test_groups_that_fit_a_list_page_cost_no_read_by_id(tmp_path: Path, sandbox: Sandbox) -> None:
    # 70 a second: every second's group is longer than half a page (the old cursor's limit) but fits one page
    site = await pulled_site(tmp_path, sandbox, "pages=5,blocks=1,files=280,users=280,rate=70")
    sandbox.clear_stats()
    run = await make_plan(site.workspace())
    assert run.plan.actions == ()
    routes = requests_by_route(sandbox)
    assert routes.get("GET /files/{fID}", 0) == 0
    assert routes.get("GET /users/{uID}", 0) == 0
    assert json.loads(render_json(run.plan))["tie_reads"] == {"files": 0, "users": 0, "cause": None}


async def test_a_group_longer_than_a_page_is_read_by_id_and_counted(tmp_path: Path, sandbox: Sandbox) -> None:
    site = await pulled_site(tmp_path, sandbox, "pages=5,blocks=1,users=250")  # every user in one second
    sandbox.clear_stats()
    run = await make_plan(site.workspace())
    by_id = requests_by_route(sandbox).get("GET /users/{uID}", 0)
    assert by_id > 0
    report = json.loads(render_json(run.plan))["tie_reads"]
    assert report["users"] == by_id
    assert "tie in a group longer than a list page" in report["cause"]
