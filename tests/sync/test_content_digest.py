"""The content digest is computed once per ``SiteContent`` and kept (``cmssync.content.site``).

A plan that writes pages is made twice (``plan_site``: planned from the batched read, the pages to write read again
on their own, planned again); both plans carry the digest, and the second one must not compute it again. A
different content (restricted to a scope, or any ``dataclasses.replace``) has its own digest, never the kept one of
the content it was made from.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from cmssync.content.site import SiteContent
from cmssync.emulator.embedded import Sandbox
from cmssync.plan import planner
from cmssync.plan.scope_model import Scope
from cmssync.sync.planning import make_plan
from tests.support.sites import EXAMPLE, PASSWORDS, Site


def _fresh_digest(content: SiteContent) -> str:
    """The digest computed from scratch, as the code before the cache did."""
    text = json.dumps(content.canonical(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _counting(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[object]:
    """Calls of ``owner.name`` (a function or method) from now on, each recorded with its first argument."""
    calls: list[object] = []
    original: Callable[..., Any] = getattr(owner, name)

    def counted(first: object, *args: Any, **kwargs: Any) -> Any:
        calls.append(first)
        return original(first, *args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


@pytest.fixture
def site(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Site:
    for name, value in PASSWORDS.items():
        monkeypatch.setenv(name, value)
    root = tmp_path / "site"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".cmssync"))
    site = Site(root, sandbox)
    assert not asyncio.run(site.apply()).failed, site.last_output
    return site


async def test_a_plan_that_plans_twice_computes_the_digest_once(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    about = site.root / "pages" / "about.yaml"
    about.write_text(about.read_text().replace("About us", "About the team"))
    workspace = site.workspace()
    canonical = _counting(monkeypatch, SiteContent, "canonical")
    plans = _counting(monkeypatch, planner, "plan")

    run = await make_plan(workspace)

    assert [(a.key, a.op) for a in run.plan.actions] == [("/about", "update")]
    assert len(plans) == 2  # the second phase ran: /about was read again on its own and planned again
    assert canonical == [workspace.content]  # the digest was computed once, for the whole content
    assert run.plan.content_digest == _fresh_digest(workspace.content)


async def test_a_no_op_plan_computes_the_digest_once(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    workspace = site.workspace()
    canonical = _counting(monkeypatch, SiteContent, "canonical")
    run = await make_plan(workspace)
    assert run.plan.actions == ()
    assert canonical == [workspace.content]
    assert run.plan.content_digest == _fresh_digest(workspace.content)


def test_a_content_made_from_another_has_its_own_digest(site: Site) -> None:
    content = site.workspace().content
    whole = content.digest()
    restricted = Scope(pages=frozenset({"/about"})).restrict(content)
    renamed = replace(content, lists={**content.lists, "group": {}})

    assert restricted.digest() == _fresh_digest(restricted) != whole
    assert renamed.digest() == _fresh_digest(renamed) != whole
    assert content.digest() == whole == _fresh_digest(content)
    assert replace(content) == content  # the kept digest is no part of equality
