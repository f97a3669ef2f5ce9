"""Issue 36 item 3 on a real site: block types a theme or package adds, probed and then editable.

Two block types a site owner would add (``theme_blocks/``: ``callout``, one table of text columns and a flag;
``countdown``, whose ``validate()`` wants a time zone its read never shows) are copied into the site's
``application/blocks`` and installed with Concrete's own ``BlockType::installBlockType``
(``theme_blocks/install.php`` through ``c5:exec``; the env file's ``CONCRETE_SITE_DIR`` says where the site is), and
one block of each is added to a page through the API and published, as an editor does (``scenario.editor_pages``:
``/privacy-policy`` and ``/subscribe-thanks`` on ``atomik_full``, two pages without children elsewhere). Then:
``pull`` keeps both as placeholders naming the command; ``probe-block-type callout`` exits 0 (symmetric),
``probe-block-type countdown`` exits 1 with the site's reason; no block of either type is left beyond the two
placed; the next ``pull`` writes the callout as content and keeps the countdown; the callout's heading edited in the
YAML and applied shows on the public page; the next plan is empty. The reset (``reset.sh``) restores the database,
so each run installs the types again (their tables stay, unused, until then). The same scenario against the sandbox:
``tests/e2e/test_block_type_probe.py``.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from tests.realsite.harness import (
    PublicSite,
    RawApi,
    Report,
    SiteAccess,
    install_block_type,
    page_files,
    run_cmssync,
)
from tests.realsite.scenario import editor_pages

CALLOUT = {"heading": "Questions? Call us", "body": "We answer on weekdays\nfrom 9 to 5.", "buttonText": "Call"}


def _blocks_of(env: dict[str, str], *handles: str) -> int:
    """How many blocks of these types the site's database holds (on any page, in any version, or in none)."""
    names = ", ".join(f"'{handle}'" for handle in handles)
    query = f"SELECT COUNT(*) FROM Blocks b JOIN BlockTypes t ON t.btID = b.btID WHERE t.btHandle IN ({names})"
    done = subprocess.run(
        [*shlex.split(env["CONCRETE_DB"]), "-N", "-B", "-e", query],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return int(done.stdout.strip())


def test_a_theme_block_type_is_probed_then_pulled_edited_and_applied(
    real_site: SiteAccess,
    realsite_env: dict[str, str],
    api: RawApi,
    public: PublicSite,
    content_dir: Path,
    report: Report,
) -> None:
    if not realsite_env.get("CONCRETE_SITE_DIR") or not realsite_env.get("CONCRETE_DB"):
        pytest.skip("the env file names no CONCRETE_SITE_DIR and CONCRETE_DB: block types cannot be installed")
    site_dir = Path(realsite_env["CONCRETE_SITE_DIR"])
    for handle in ("callout", "countdown"):
        install_block_type(site_dir, handle)
    tree = api.tree()
    pages = editor_pages(api, tree)  # atomik_full: /privacy-policy and /subscribe-thanks; elemental_full: …
    api.add_block(tree[pages.source], "Main", "callout", {**CALLOUT, "showIcon": 1})
    api.approve(tree[pages.source])
    api.add_block(tree[pages.linked], "Main", "countdown", {"title": "Launch in", "endDate": "2027-01-01"})
    api.approve(tree[pages.linked])

    pull = run_cmssync(real_site, content_dir, "pull")
    report.add("theme-block-types", pull, callout=pages.source, countdown=pages.linked)
    assert pull.code == 0, pull.output
    files = dict(page_files(content_dir))
    callout_file, countdown_file = files[pages.source], files[pages.linked]
    assert "keep: {type: callout" in callout_file.read_text(encoding="utf-8")
    assert "cmssync probe-block-type callout" in pull.output

    probe = run_cmssync(real_site, content_dir, "probe-block-type", "callout")
    report.add("theme-block-types", probe)
    assert probe.code == 0, probe.output
    assert "callout: round-trips" in probe.output
    refused = run_cmssync(real_site, content_dir, "probe-block-type", "countdown")
    report.add("theme-block-types", refused)
    assert refused.code == 1, refused.output
    assert "Choose a time zone." in refused.output
    assert _blocks_of(realsite_env, "callout", "countdown") == 2  # every copy deleted; the placed blocks untouched

    again = run_cmssync(real_site, content_dir, "pull")
    report.add("theme-block-types", again)
    assert again.code == 0, again.output
    written = callout_file.read_text(encoding="utf-8")
    assert "type: callout" in written
    assert "heading: Questions? Call us" in written
    assert "keep: {type: countdown" in countdown_file.read_text(encoding="utf-8")
    assert "Choose a time zone." in again.output

    callout_file.write_text(written.replace("heading: Questions? Call us", "heading: Talk to us"), encoding="utf-8")
    apply = run_cmssync(real_site, content_dir, "apply", "--yes")
    report.add("theme-block-types", apply)
    assert apply.code == 0, apply.output
    assert "<h3>Talk to us</h3>" in public.page(pages.source).html
    plan = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode")
    report.add("theme-block-types", plan)
    assert plan.code == 0, plan.output
