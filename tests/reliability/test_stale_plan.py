"""A plan file whose preconditions no longer hold is refused, creates included (issue 15, item 2).

Before: only actions on an existing page (a remote id) were checked, so ``plan -o p.json``, ``apply DIR p.json``,
then ``apply DIR p.json`` again (a re-run CI job) created ``/about-1``, a second group, second copies of every file
and a user the site refused, pointed the state at the duplicates, and blamed Concrete's stop words. Now every create
says "absent at plan time" and the second apply stops before any write, naming the object.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from tests.reliability.cli import run_cli
from tests.reliability.inventory import duplicates, problems, take_inventory
from tests.reliability.sites import USER_PASSWORD_ENV, ReliabilitySite, cli_environment, write_settings
from tests.support.rawsite import RawSite
from tests.support.reliability_report import ReliabilityReport
from tests.support.sites import copy_example

NEWS = "name: News\nareas:\n  Main:\n    - type: content\n      value: {content: <p>News.</p>}\n"


@pytest.fixture
def site(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> ReliabilitySite:
    root = tmp_path / "site"
    copy_example(root)
    return cli_environment(ReliabilitySite(root, sandbox), monkeypatch)


@pytest.fixture
def new_objects(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> ReliabilitySite:
    """Content whose plan only creates (a page, a group, a file, a user): nothing a remote id could guard."""
    root = tmp_path / "site"
    root.mkdir()
    write_settings(root)
    (root / "pages").mkdir()
    (root / "pages" / "news.yaml").write_text(NEWS, encoding="utf-8")
    (root / "groups.yaml").write_text("- name: Newsroom\n", encoding="utf-8")
    (root / "files").mkdir()
    (root / "files" / "press-kit.txt").write_text("Logos and photos.\n", encoding="utf-8")
    (root / "users.yaml").write_text(
        f"- username: reporter\n  email: reporter@example.com\n  password: ${{env:{USER_PASSWORD_ENV}}}\n",
        encoding="utf-8",
    )
    return cli_environment(ReliabilitySite(root, sandbox), monkeypatch)


@pytest.mark.parametrize("first", ["plan-file", "fresh-plan"], ids=["applied-from-the-file", "applied-afresh"])
def test_a_plan_file_applied_again_is_refused_as_stale(
    first: str,
    new_objects: ReliabilitySite,
    raw: RawSite,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    reliability_report: ReliabilityReport,
) -> None:
    site = new_objects
    plan_file = tmp_path / "p.json"
    seed = take_inventory(raw, block_pages=set())
    made = run_cli(capsys, "plan", str(site.root), "-o", str(plan_file))
    assert made.code in (0, 2), made.text
    applied = run_cli(capsys, "apply", "--yes", str(site.root), *([str(plan_file)] if first == "plan-file" else []))
    assert applied.code == 0, applied.text
    state_before = site.state_path.read_bytes()
    done = take_inventory(raw, block_pages=set(site.content().pages))

    again = run_cli(capsys, "apply", "--yes", str(site.root), str(plan_file))  # the re-run CI job

    after = take_inventory(raw, block_pages=set(site.content().pages))
    found = problems(seed, after, site.content(), site.state())
    reliability_report.add(cases_tried=1, applies=2, duplicates_found=duplicates(found))
    assert again.code == 1, again.text
    assert "the plan file is stale: group Newsroom exists on the site now (group id " in again.err, again.text
    assert "and the plan was made to create it; run `cmssync plan` again" in again.err
    assert "Traceback" not in again.text
    assert found == [], found
    assert (sorted(after.pages), after.files, after.users, after.groups) == (
        sorted(done.pages),
        done.files,
        done.users,
        done.groups,
    )
    assert site.state_path.read_bytes() == state_before


@pytest.mark.parametrize(
    ("kind", "key"),
    [("page", "/services/training"), ("file", "documents/price-list.txt"), ("user", "sam_writer")],
    ids=["page", "file", "user"],
)
def test_each_kind_of_create_names_the_object_that_appeared(
    kind: str,
    key: str,
    site: ReliabilitySite,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    reliability_report: ReliabilityReport,
) -> None:
    """One object appeared since the plan (a targeted apply made it; it depends on nothing): the plan file is
    refused, naming it, and nothing else is written."""
    plan_file = tmp_path / "p.json"
    assert run_cli(capsys, "plan", str(site.root), "-o", str(plan_file)).code in (0, 2)
    target = f"{kind}:{key}"
    assert run_cli(capsys, "apply", "--yes", str(site.root), "--target", target).code == 0

    state_before = site.state_path.read_bytes()

    again = run_cli(capsys, "apply", "--yes", str(site.root), str(plan_file))

    reliability_report.add(cases_tried=1)
    assert site.state_path.read_bytes() == state_before
    assert again.code == 1, again.text
    assert f"the plan file is stale: {kind} {key} exists on the site now (" in again.err, again.text
