"""``plan --target`` reads only its scope, and plans exactly what the whole-site plan plans for its targets.

The reference is the whole-site path itself: the same ``plan_site`` with the scope computation switched off
(``scope_for_targets`` answering "read the whole site"), i.e. every page, file, user and group read and the plan
restricted to the targets afterwards. The site has references between pages and to files, a page created under a
new parent, a moved page, a page trashed outside cmssync that a changed page links to, and page, file and user
deletes.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.errors import PlanError
from cmssync.plan.actions import Plan
from cmssync.plan.request import PlanRequest
from cmssync.plan.scope import WholeSite
from cmssync.sync import planning
from cmssync.sync.planning import PlanRun, make_plan
from tests.support.rawsite import trash_page
from tests.support.sites import Site, copy_example

NEWS = 20
DOCS = 20


def _page(name: str, html: str) -> str:
    body = "\n".join("          " + line for line in html.splitlines())
    return f"name: {name}\nareas:\n  Main:\n    - type: content\n      value:\n        content: |\n{body}\n"


def _news(k: int, extra: str = "") -> str:
    link = f'<p>Next: <a href="${{page-link:/news/item-{k + 1:02d}}}">item {k + 1}</a></p>' if k < NEWS else ""
    return _page(f"News {k}", f"<p>News item {k}.{extra}</p>\n{link}")


def _doc(k: int) -> str:
    return _page(f"Doc {k}", f'<p>Doc {k}.</p>\n<p><img src="${{file:images/logo.png}}" alt="logo"></p>')


@pytest.fixture
def changed_site(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Site:
    """The example content plus 42 pages applied to the sandbox, then changed in the content and on the site."""
    root = copy_example(tmp_path / "site", monkeypatch)
    site = Site(root, sandbox)
    site.write("pages/news.yaml", _page("News", "<p>All the news.</p>"))
    site.write("pages/docs.yaml", _page("Docs", "<p>All the docs.</p>"))
    for k in range(1, NEWS + 1):
        site.write(f"pages/news/item-{k:02d}.yaml", _news(k))
    for k in range(1, DOCS + 1):
        site.write(f"pages/docs/d-{k:02d}.yaml", _doc(k))
    site.write("files/documents/old.txt", "an old document\n")
    return site


async def _change(site: Site) -> None:
    report = await site.apply()
    assert not report.failed, site.last_output
    assert (await site.plan()).actions == ()
    # content: an edit, a new page linking a new page under a new parent and a new file, a move, deletes
    site.write("pages/news/item-03.yaml", _news(3, " Edited."))
    site.write("pages/news/item-09.yaml", _news(9, " Edited too."))
    html = '<p>See <a href="${page-link:/fresh/child}">the new one</a>.</p>\n<img src="${file:images/new.png}">'
    site.write("pages/news/item-21.yaml", _page("News 21", html))
    site.write("pages/fresh.yaml", _page("Fresh", "<p>A new section.</p>"))
    site.write("pages/fresh/child.yaml", _page("Fresh child", '<p><a href="${page-link:/news/item-01}">news</a></p>'))
    shutil.copy(site.root / "files/images/logo.png", site.root / "files/images/new.png")
    (site.root / "pages/docs/d-05.yaml").rename(site.root / "pages/about/d-05.yaml")
    (site.root / "pages/docs/d-07.yaml").unlink()
    (site.root / "files/documents/old.txt").unlink()
    users = (site.root / "users.yaml").read_text()
    users = users.replace("sam.writer@example.com", "sam@example.com")
    start = users.index("- username: jane.editor")
    end = users.index("- username: sam_writer")
    (site.root / "users.yaml").write_text(users[:start] + users[end:])
    site.write("groups.yaml", "- name: Content Team\n- name: Reviewers\n- name: Authors Circle\n")
    # the site: a page trashed outside cmssync, which the edited item-09 links to
    trash_page(site.sandbox, "/news/item-10")


def _summary(plan: Plan) -> dict[str, Any]:
    return {
        "actions": [action.model_dump() for action in plan.actions],
        "blocked": [blocked.model_dump() for blocked in plan.blocked],
        "conflicts": [conflict.model_dump() for conflict in plan.conflicts],
        "held": [held.model_dump() for held in plan.held],
    }


async def _whole_site(site: Site, monkeypatch: pytest.MonkeyPatch, request: PlanRequest) -> PlanRun:
    with monkeypatch.context() as patch:
        patch.setattr(planning, "scope_for_targets", lambda *args, **kwargs: WholeSite("reference"))
        return await make_plan(site.workspace(), request)


TARGETS: list[tuple[str, ...]] = [
    ("page:/news/item-03",),  # an edit
    ("page:/news/item-21",),  # a create that depends on a new page under a new parent and on a new file
    ("page:/news/item-09",),  # an edit that links to a page trashed outside cmssync (created again first)
    ("page:/news/item-10",),  # the trashed page itself
    ("page:/about/d-05",),  # a moved page
    ("page:/docs/d-07",),  # a page delete (read as the whole site)
    ("file:documents/old.txt",),  # a file delete: every file the guards count
    ("file:images/new.png", "group:Authors Circle"),
    ("user:jane.editor",),  # a user delete
    ("user:sam_writer",),
    ("page:/news/item-0[12]",),  # nothing to do
    ("page:/fresh*", "page:/services/*"),
]


SECOND_ROUND = [("page:/docs/d-07",), ("page:/news/item-09",), ("page:/news/item-10",)]
"""Targets that read more than their first scope: a page delete reads the whole site; a page the state knows but
the site lost is found missing by the first read, and the second reads what its re-creation needs (on this small
site, under 5 parents, about as much as the whole site)."""


@pytest.mark.slow
async def test_a_targeted_plan_is_the_whole_site_plan_restricted_to_its_targets(
    changed_site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = changed_site
    await _change(site)
    whole = await make_plan(site.workspace(), PlanRequest(prune=True))
    assert {(a.key, a.op) for a in whole.plan.actions} >= {
        ("/news/item-03", "update"),
        ("/news/item-21", "create"),
        ("/fresh", "create"),
        ("/news/item-10", "create"),
        ("/about/d-05", "move"),
        ("/docs/d-07", "delete"),
        ("documents/old.txt", "delete"),
        ("jane.editor", "delete"),
        ("Authors Circle", "create"),
    }, whole.plan.actions
    for replace_moved in (False, True):
        for targets in TARGETS:
            request = PlanRequest(targets=targets, prune=True, replace_moved=replace_moved)
            reference = await _whole_site(site, monkeypatch, request)
            scoped = await make_plan(site.workspace(), request)
            assert _summary(scoped.plan) == _summary(reference.plan), (targets, replace_moved)
            assert set(scoped.plan.warnings) <= set(reference.plan.warnings), (targets, replace_moved)
            assert scoped.plan.content_digest == reference.plan.content_digest
            if targets not in SECOND_ROUND:
                assert scoped.requests < reference.requests, (targets, scoped.requests, reference.requests)
    # without pruning, targets of objects the content dropped plan nothing, as in the whole-site plan
    for targets in [("page:/docs/d-07",), ("file:documents/old.txt",), ("user:jane.editor",)]:
        request = PlanRequest(targets=targets, prune=False)
        scoped = await make_plan(site.workspace(), request)
        assert _summary(scoped.plan) == _summary((await _whole_site(site, monkeypatch, request)).plan)
        assert scoped.plan.actions == ()


@pytest.mark.slow
async def test_an_unmatched_or_malformed_target_is_refused_before_any_request(
    changed_site: Site, sandbox: Sandbox
) -> None:
    site = changed_site
    assert not (await site.apply()).failed
    for target, message in [("page:/no-such-page", "matches no page"), ("pages:/about", "invalid --target")]:
        sandbox.clear_stats()
        with pytest.raises(PlanError, match=message):
            await make_plan(site.workspace(), PlanRequest(targets=(target,)))
        routes = sandbox.stats()["by_route"]
        assert not any(route.startswith("GET /pages") for route in routes), routes


@pytest.mark.slow
async def test_a_targeted_apply_writes_from_its_scope(changed_site: Site) -> None:
    """The scoped snapshot carries what the writes need: parent ids, the new file, the ids links resolve to."""
    site = changed_site
    await _change(site)
    targets = ("page:/news/item-21", "page:/news/item-09", "file:documents/old.txt")
    planned = await site.plan(targets=targets, prune=True)
    report = await site.apply(targets=targets, prune=True)
    assert not report.failed, site.last_output
    assert [o.action.id for o in report.outcomes] == [a.id for a in planned.actions]
    done = {a.id for a in planned.actions}
    assert {"page:/fresh", "page:/fresh/child", "file:images/new.png", "file:documents/old.txt"} <= done
    left = {a.id for a in (await site.plan(prune=True)).actions}
    assert not done & left, done & left
    assert (await site.plan(targets=targets[:2], prune=True)).actions == ()
    with pytest.raises(PlanError, match="matches no file"):  # deleted: neither the content nor the state has it
        await site.plan(targets=targets[2:], prune=True)
