"""Issue 14 on a real Concrete CMS 9.3.1 site (opt-in: see conftest.py for how to run it).

Each test starts from a fresh ``atomik_full`` site (reset script), adds editor content through the API where the
scenario needs it, and runs cmssync through its CLI in a subprocess, as a user would.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cmssync.content.paths import dropped_words
from tests.realsite.harness import PublicSite, RawApi, Report, SiteAccess, page_files, run_cmssync
from tests.realsite.scenario import DROPPED_WORD_PAGE, LINK_TEXT, done_when, seed_editor_content


def test_pull_edit_apply_keeps_every_link_and_image(
    real_site: SiteAccess, api: RawApi, public: PublicSite, content_dir: Path, report: Report
) -> None:
    outcome = done_when(real_site, api, public, content_dir)
    for name, run in outcome.runs.items():
        report.add("done-when", run, step=name)
    report.note(
        "done-when",
        f"{outcome.pages} pages, {len(outcome.edits)} edited, blocks {outcome.blocks_before} → {outcome.blocks_after}, "
        f"{outcome.links_compared} links/images compared ({outcome.unstable_links} unstable left out), "
        f"{len(outcome.findings)} findings",
    )
    for finding in outcome.findings:
        report.note("done-when", "FINDING " + " | ".join(finding.splitlines()[:12])[:600])
    assert not outcome.findings, "\n".join(outcome.findings)


def test_pull_keeps_a_page_whose_handle_has_a_dropped_word(
    real_site: SiteAccess, api: RawApi, content_dir: Path, report: Report
) -> None:
    """Every page of the site's tree is pulled, those whose handle holds a word Concrete drops from the URLs it
    makes (``atomik_full``: ``/about/blog/freshen-up-your-website``; ``elemental_full``: ``/blog/a-beautiful-blog``)
    among them, and the content validates."""
    tree = api.tree()
    pull = run_cmssync(real_site, content_dir, "pull")
    dropped = sorted(path for path in tree if dropped_words(path.rsplit("/", 1)[-1]))  # for the report
    report.add("dropped-word handle", pull, pages=len(tree), dropped_word_pages=len(dropped))
    assert pull.code == 0, pull.output
    pulled = {path for path, _ in page_files(content_dir)}
    assert not set(tree) - pulled, (sorted(set(tree) - pulled), pull.output)
    assert DROPPED_WORD_PAGE in pulled or DROPPED_WORD_PAGE not in tree
    validate = run_cmssync(real_site, content_dir, "validate")
    assert validate.code == 0, validate.output


def test_pull_then_plan_is_empty(real_site: SiteAccess, api: RawApi, content_dir: Path, report: Report) -> None:
    seed_editor_content(api)
    pull = run_cmssync(real_site, content_dir, "pull")
    plan = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode")
    report.add("pull then plan", pull, pages=len(list(page_files(content_dir))))
    report.add("pull then plan", plan)
    assert pull.code == 0, pull.output
    assert plan.code == 0, plan.output


def test_a_page_link_follows_the_page_it_names_when_it_moves(
    real_site: SiteAccess, api: RawApi, public: PublicSite, content_dir: Path, report: Report
) -> None:
    """The link an editor put on a page keeps pointing at its page after cmssync moves that page.

    The content moves the linked page (``atomik_full``: ``/subscribe-thanks`` to ``/about/subscribe-thanks``;
    elsewhere under the first top-level page that is not it) — file moved, its page links and page ids renamed in
    every file as a user would (a footer's form may redirect to it) — and applies with ``--replace-moved``: the page
    is re-created under its new parent, so the link, stored as ``{CCM:CID_<id>}``, must be written again with the
    new page's id.
    """
    seeded = seed_editor_content(api)
    linked = seeded.linked
    pull = run_cmssync(real_site, content_dir, "pull")
    assert pull.code == 0, pull.output
    tree = api.tree()
    parent = "/about" if "/about" in tree else min(p for p in tree if p.count("/") == 1 and p not in ("/", linked))
    moved = parent + "/" + linked.rsplit("/", 1)[-1]
    source = content_dir / "pages" / f"{linked.strip('/')}.yaml"
    source.rename(content_dir / "pages" / f"{moved.strip('/')}.yaml")
    mentions = 0
    for file in sorted(content_dir.rglob("*.yaml")):  # pages and stacks: a stack's form may redirect to it
        text = file.read_text(encoding="utf-8")
        renamed = text
        for kind in ("page-link", "page-id"):
            renamed = renamed.replace(f"${{{kind}:{linked}}}", f"${{{kind}:{moved}}}")
        mentions += text.count(f"${{page-link:{linked}}}")
        file.write_text(renamed, encoding="utf-8")
    assert mentions, f"pull wrote no ${{page-link:{linked}}} reference for the editor's link"
    apply = run_cmssync(real_site, content_dir, "apply", "--yes", "--replace-moved")
    report.add("page link follows a move", apply, links_renamed=mentions, moved=f"{linked} -> {moved}")
    assert apply.code == 0, apply.output
    page = public.page(seeded.source)
    anchor = re.search(rf'<a [^>]*href="([^"]*)"[^>]*>{re.escape(LINK_TEXT)}</a>', page.html)
    assert anchor is not None, f"the editor's link is gone from {seeded.source}"
    assert anchor.group(1).rstrip("/").endswith(moved), anchor.group(0)
    assert public.page(moved).status == 200
    plan = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode")
    assert plan.code == 0, plan.output


def test_a_targeted_user_is_read_by_id(
    real_site: SiteAccess,
    content_dir: Path,
    realsite_env: dict[str, str],
    report: Report,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``plan --target user:NAME`` of a user cmssync manages reads that user by id, not the site's user list."""
    users = content_dir / "users.yaml"
    users.write_text(
        "- username: cmssync.target\n  email: cmssync.target@example.com\n  password: ${env:REALSITE_USER_PASSWORD}\n"
        "- username: cmssync.other\n  email: cmssync.other@example.com\n  password: ${env:REALSITE_USER_PASSWORD}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("REALSITE_USER_PASSWORD", "a-long-enough-password-1")
    applied = run_cmssync(real_site, content_dir, "apply", "--yes")
    report.add("targeted user", applied)
    assert applied.code == 0, applied.output
    users.write_text(users.read_text().replace("cmssync.target@example.com", "changed@example.com"), encoding="utf-8")
    log = Path(realsite_env["CONCRETE_REQUEST_LOG"])
    seen = len(log.read_text(encoding="utf-8").splitlines())
    plan = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode", "--target", "user:cmssync.target")
    report.add("targeted user", plan)
    assert plan.code == 2, plan.output
    assert "cmssync.target" in plan.output, plan.output
    assert "cmssync.other" not in plan.output, plan.output
    uris = [line.split()[4] for line in log.read_text(encoding="utf-8").splitlines()[seen:] if len(line.split()) > 4]
    api = [uri.split("?")[0] for uri in uris if uri.startswith("/ccm/api/1.0/")]
    assert not any(uri == "/ccm/api/1.0/users" for uri in api), api
    assert sum(1 for uri in api if re.fullmatch(r"/ccm/api/1\.0/users/\d+", uri)) == 1, api
