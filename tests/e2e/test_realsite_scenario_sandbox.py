"""Issue 14's "Done when" scenario in CI: the sandbox seeded with the real ``atomik_full`` site as recorded.

The same scenario as ``tests/realsite`` (:func:`tests.realsite.scenario.done_when`), against the sandbox rebuilt
from ``shared/conformance/concrete-9.3.1/blocks.jsonl`` (the sample site's pages, layouts, containers, galleries,
hero images and 36 files, with their numeric ids): editor links, download links, pictures and an image block are
added through the HTTP API, then ``pull`` → ``plan`` → edit one block per page → ``apply`` → ``plan`` run through
cmssync's CLI. Every link and image of every public page must resolve as before, every edit must show, no block may
be lost, gained or re-created except the edited ones, and both plans must be empty.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from tests.realsite.harness import PublicSite, RawApi, SiteAccess, page_files, run_cmssync, write_settings
from tests.realsite.scenario import DROPPED_WORD_PAGE, done_when, seed_editor_content
from tests.support.atomik import atomik_sandbox


@pytest.fixture
def atomik(sandbox_server: Sandbox, tmp_path: Path) -> Iterator[SiteAccess]:
    with atomik_sandbox(sandbox_server, tmp_path) as (site, _numeric):
        yield site


@pytest.fixture
def api(atomik: SiteAccess) -> Iterator[RawApi]:
    with contextlib.closing(RawApi(atomik)) as client:
        yield client


@pytest.fixture
def directory(tmp_path: Path, atomik: SiteAccess) -> Path:
    root = tmp_path / "site"
    write_settings(root, atomik)
    return root


def test_pull_edit_apply_keeps_every_link_and_image(atomik: SiteAccess, api: RawApi, directory: Path) -> None:
    public = PublicSite(atomik.base_url)
    try:
        outcome = done_when(atomik, api, public, directory)
    finally:
        public.close()
    assert outcome.pages >= 20, "the recorded site was not seeded"
    assert outcome.links_compared > 0, "no link or image was compared"
    summary = "\n".join(run.line() for run in outcome.runs.values())
    assert not outcome.findings, summary + "\n" + "\n".join(outcome.findings)


def test_pull_keeps_a_page_whose_handle_has_a_dropped_word(atomik: SiteAccess, directory: Path) -> None:
    pull = run_cmssync(atomik, directory, "pull")
    assert pull.code == 0, pull.output
    assert DROPPED_WORD_PAGE in {path for path, _ in page_files(directory)}, pull.output


def test_pull_then_plan_is_empty(atomik: SiteAccess, api: RawApi, directory: Path) -> None:
    seed_editor_content(api)
    pull = run_cmssync(atomik, directory, "pull")
    assert pull.code == 0, pull.output
    plan = run_cmssync(atomik, directory, "plan", "--detailed-exitcode")
    assert plan.code == 0, plan.output
