"""An incremental run (the daemon's, after a page file is saved) resolves references exactly as a full run does
(issue 26 item 3): the pages and files a saved page refers to are read although they are outside the changed files,
so a ``${page-link:…}`` to another page no longer fails as "does not exist on the site"."""

from __future__ import annotations

import pytest

from cmssync.plan.request import PlanRequest
from cmssync.plan.scope import scope_for_paths
from cmssync.sync.planning import make_plan
from tests.support.rawsite import RawSite
from tests.support.sites import Site

REFERENCES = {
    "page-link": '<p>See <a href="${page-link:/about/team}">the team</a>.</p>',
    "page-id": '<p data-page="${page-id:/about}">About, by id.</p>',
    "file-link": '<p>Get <a href="${file-link:documents/brochure.pdf}">the brochure</a>.</p>',
    "file-id": '<p><concrete-picture fID="${file-id:images/logo.png}" alt="logo" /></p>',
    "file": '<p><img src="${file:images/team-photo.png}" alt="team"></p>',
}


@pytest.mark.parametrize("kind", sorted(REFERENCES))
async def test_a_saved_page_with_a_reference_is_applied_by_the_incremental_run(
    example: Site, raw: RawSite, kind: str
) -> None:
    assert not (await example.apply()).failed, example.last_output
    training = "          <h2>Training</h2>\n"
    example.edit("pages/services.yaml", training, training + f"          {REFERENCES[kind]}\n")
    scope = scope_for_paths(["pages/services.yaml"])
    assert scope is not None
    incremental = (await make_plan(example.workspace(), PlanRequest(scope=scope))).plan
    whole = (await make_plan(example.workspace())).plan
    assert [a.model_dump() for a in whole.actions if a.key == "/services"] == [
        a.model_dump() for a in incremental.actions
    ]
    report = await example.apply(scope=scope)
    assert not report.failed, example.last_output
    assert [(o.action.key, o.status) for o in report.outcomes] == [("/services", "ok")]
    assert (await example.plan()).actions == ()
