"""A no-op plan costs about pages + files/100 + users/100 + a constant requests (design: observe reads by id)."""

from __future__ import annotations

import io
import math
from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.sync.planning import make_plan
from cmssync.sync.pull import run_pull
from tests.support.rawsite import RawSite
from tests.support.sites import Site


@pytest.mark.slow
@pytest.mark.parametrize(("pages", "files", "users"), [(20, 120, 110), (60, 250, 230)])
async def test_no_op_plan_requests_grow_linearly(
    tmp_path: Path, sandbox: Sandbox, pages: int, files: int, users: int
) -> None:
    sandbox.reset(seed="empty", generate=f"pages={pages},blocks=2,files={files},users={users}")
    root = tmp_path / "site"
    root.mkdir()
    site = Site(root, sandbox)
    assert await run_pull(root, out=io.StringIO(), overrides=site.overrides()) == 0
    run = await make_plan(site.workspace())
    assert run.plan.actions == ()
    live_pages = len(run.snapshot.pages)
    assert live_pages >= pages
    # Users the list walk skips (the generator gives them all one date: concrete-api.md §13) are read one by one.
    raw = RawSite(sandbox)  # after the reset, which revokes earlier tokens
    listed = {user["id"] for user in raw.all("/users")}
    raw.close()
    missed = len([record for record in run.state.users.values() if record.id not in listed])
    bound = live_pages + math.ceil(files / 100) + math.ceil(users / 100) + missed
    # constant: token, default site, groups list, and one extra list page per list that ends on a full page
    assert bound <= run.requests <= bound + 6, (run.requests, bound, missed)
