"""Three-way conflicts of users and files (issue 16 part 1): the state records only a digest of what cmssync last
applied, so the base is reconstructed from it (``cmssync.plan.asset_conflicts``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cmssync.config import ConflictRule
from cmssync.content.site import SiteContent
from cmssync.plan.actions import Action, FieldChange, Plan
from cmssync.plan.asset_conflicts import applied_file_digest, applied_user_digest, same_user_field
from cmssync.plan.asset_forms import desired_file_meta, file_digest, file_hash, user_digest, user_form
from cmssync.plan.conflicts import ConflictPolicies
from cmssync.plan.drift import DriftPolicies
from cmssync.plan.planner import PlanOptions, plan
from cmssync.plan.snapshot import LiveFile, LiveUser, Snapshot
from cmssync.render.markdown import render_markdown
from cmssync.render.text import render_json, render_text
from cmssync.state.records import FileRecord, State, UserRecord
from tests.sync.sitebuilder import BASE, snapshot, write_content

REVERT = DriftPolicies(default="revert")
JANE = "- username: jane\n  email: {email}\n  language: {language}\n"


def users(tmp_path: Path, name: str, email: str, language: str = "en_US", password: bool = False) -> SiteContent:
    text = JANE.format(email=email, language=language) + ("  password: ${env:JANE_PASSWORD}\n" if password else "")
    return write_content(tmp_path / name, {"users.yaml": text})


def user_state(tmp_path: Path, email: str, language: str = "en_US", *, with_digest: bool = True) -> State:
    """The state after cmssync applied jane with this email and language."""
    applied = users(tmp_path, "applied", email, language)
    state = State()
    digest = user_digest(applied.users["jane"]) if with_digest else None
    state.record_user("jane", UserRecord(id=7, digest=digest))
    return state


def site_user(email: str, language: str | None = "en_US") -> Snapshot:
    return snapshot(users=(LiveUser(7, "jane", email, language),))


def run(content: SiteContent, observed: Snapshot, state: State, **kwargs: object) -> Plan:
    return plan(content, observed, state, PlanOptions(base_url=BASE, **kwargs))  # type: ignore[arg-type]


# --- users --------------------------------------------------------------------------------------------------------


def test_a_user_changed_on_the_site_and_in_the_content_is_held(tmp_path: Path) -> None:
    state = user_state(tmp_path, "jane@base.example")
    content = users(tmp_path, "now", "jane@content.example")
    result = run(content, site_user("jane@site.example"), state)
    assert result.actions == ()
    [held] = result.held
    assert (held.id, held.reason, held.fails) == ("user:jane", "conflict", True)
    assert held.action is not None
    assert [c.field for c in held.action.changes] == ["email"]
    [conflict] = result.conflicts
    assert (conflict.field, conflict.base_known, conflict.resolution) == ("email", False, "fail")
    assert (conflict.content, conflict.site) == ("jane@content.example", "jane@site.example")
    assert result.refused
    text = render_text(result)
    assert "! user jane: refused" in text
    assert "conflict email (fail)" in text
    assert "base:    (not known)" in text
    assert '"refused": 1' in render_json(result)
    assert "user jane" in render_markdown(result)


def test_force_lets_the_content_win_and_marks_the_conflict(tmp_path: Path) -> None:
    state = user_state(tmp_path, "jane@base.example")
    content = users(tmp_path, "now", "jane@content.example")
    result = run(content, site_user("jane@site.example"), state, conflicts=ConflictPolicies(force=True))
    [action] = result.actions
    assert [(c.field, c.before, c.after) for c in action.changes] == [
        ("email", "jane@site.example", "jane@content.example")
    ]
    assert not result.held
    assert [(c.field, c.resolution) for c in result.conflicts] == [("email", "content_wins")]
    assert "conflict settled (content_wins)" in render_text(result)


def test_site_wins_keeps_the_site_and_plans_nothing(tmp_path: Path) -> None:
    state = user_state(tmp_path, "jane@base.example")
    content = users(tmp_path, "now", "jane@content.example")
    rules = (ConflictRule(match="user:j*", policy="site_wins"),)
    result = run(content, site_user("jane@site.example"), state, conflicts=ConflictPolicies(rules=rules))
    assert result.actions == ()
    assert not result.held
    assert [(c.field, c.resolution) for c in result.conflicts] == [("email", "site_wins")]


def test_site_wins_still_sets_a_changed_password(tmp_path: Path) -> None:
    state = user_state(tmp_path, "jane@base.example")
    content = users(tmp_path, "now", "jane@content.example", password=True)
    policies = ConflictPolicies(default="site_wins")
    observed = site_user("jane@site.example")
    result = run(content, observed, state, conflicts=policies, passwords_changed=frozenset({"jane"}))
    [action] = result.actions
    assert [(c.field, c.sensitive) for c in action.changes] == [("password", True)]
    # after apply, the recorded digest stays: the next run sees the same conflict, not drift
    old = state.users["jane"].digest
    new = user_digest(content.users["jane"])
    live = observed.users["jane"]
    assert applied_user_digest(user_form(content.users["jane"]), action, live, old, new, same_user_field) == old


def test_only_the_site_changed_is_a_site_change_kept_by_default_and_reverted_under_revert(tmp_path: Path) -> None:
    state = user_state(tmp_path, "jane@base.example")
    content = users(tmp_path, "now", "jane@base.example")
    kept = run(content, site_user("jane@site.example"), state)
    assert kept.actions == ()
    [change] = kept.site_changes
    assert (change.id, change.action) == ("user:jane", "propose")
    [email] = change.changes
    assert (email.field, email.before, email.after) == ("email", "jane@base.example", "jane@site.example")
    result = run(content, site_user("jane@site.example"), state, drift=REVERT)
    [action] = result.actions
    assert action.drift
    assert [(c.field, c.after) for c in action.changes] == [("email", "jane@base.example")]
    assert not result.conflicts
    assert not result.held
    assert not result.site_changes


def test_only_the_content_changed_is_a_plain_update(tmp_path: Path) -> None:
    state = user_state(tmp_path, "jane@base.example")
    content = users(tmp_path, "now", "jane@content.example", language="de_DE")
    result = run(content, site_user("JANE@BASE.example"), state)  # the same mailbox, in another case
    [action] = result.actions
    assert not action.drift
    assert {c.field for c in action.changes} == {"email", "language"}
    assert not result.conflicts


def test_each_side_changing_another_field_is_no_conflict(tmp_path: Path) -> None:
    """The base is reconstructed from the digest: the site changed the email (kept, a site change), the content the
    language (written)."""
    state = user_state(tmp_path, "jane@base.example")
    content = users(tmp_path, "now", "jane@base.example", language="de_DE")
    result = run(content, site_user("jane@site.example"), state)
    [action] = result.actions
    assert [c.field for c in action.changes] == ["language"]
    assert [c.fields for c in result.site_changes] == [("email",)]
    assert not result.conflicts
    reverted = run(content, site_user("jane@site.example"), state, drift=REVERT)
    [both] = reverted.actions
    assert {c.field for c in both.changes} == {"email", "language"}
    assert both.drift


def test_a_state_without_digests_claims_no_conflict(tmp_path: Path) -> None:
    state = user_state(tmp_path, "jane@base.example", with_digest=False)
    content = users(tmp_path, "now", "jane@content.example")
    result = run(content, site_user("jane@site.example"), state)
    [action] = result.actions
    assert not action.drift
    assert not result.conflicts
    assert not result.held


def test_a_language_the_content_starts_to_manage_is_not_a_site_change(tmp_path: Path) -> None:
    applied = write_content(tmp_path / "applied", {"users.yaml": "- username: jane\n  email: jane@base.example\n"})
    state = State()
    state.record_user("jane", UserRecord(id=7, digest=user_digest(applied.users["jane"])))
    content = users(tmp_path, "now", "jane@base.example", language="de_DE")
    result = run(content, site_user("jane@base.example", "en_US"), state)
    [action] = result.actions
    assert [c.field for c in action.changes] == ["language"]
    assert not action.drift
    assert not result.conflicts


# --- files --------------------------------------------------------------------------------------------------------

LOGO = b"\x89PNG logo bytes"
SIDECAR = "title: {title}\ndescription: {description}\ntags: [logo]\n"


def files(tmp_path: Path, name: str, title: str, description: str = "The logo.", body: bytes = LOGO) -> SiteContent:
    sidecar = SIDECAR.format(title=title, description=description)
    return write_content(tmp_path / name, {"files/logo.png": body, "files/logo.png.yaml": sidecar})


def file_state(tmp_path: Path, title: str, description: str = "The logo.") -> State:
    applied = files(tmp_path, "applied", title, description)
    spec = applied.files["logo.png"]
    state = State()
    url = f"{BASE}/application/files/1/logo.png"
    state.record_file("logo.png", FileRecord(id="uuid-1", hash=file_hash(spec), url=url, digest=file_digest(spec)))
    return state


def site_file(title: str, description: str = "The logo.") -> Snapshot:
    url = f"{BASE}/application/files/1/logo.png"
    return snapshot(files=(LiveFile("uuid-1", "logo.png", url, title, description, ("logo",), None, len(LOGO)),))


def test_a_file_title_changed_on_both_sides_is_held_and_its_url_stays_known(tmp_path: Path) -> None:
    state = file_state(tmp_path, "Logo")
    content = files(tmp_path, "now", "Logo from the content")
    result = run(content, site_file("Logo from the editor"), state)
    assert result.actions == ()
    assert [h.id for h in result.held] == ["file:logo.png"]
    [conflict] = result.conflicts
    assert (conflict.kind, conflict.field, conflict.content, conflict.site) == (
        "file",
        "title",
        "Logo from the content",
        "Logo from the editor",
    )
    assert "! file logo.png: refused" in render_text(result)


def test_a_page_referencing_a_held_file_keeps_its_url(tmp_path: Path) -> None:
    state = file_state(tmp_path, "Logo")
    content = files(tmp_path, "now", "Logo from the content")
    page_yaml = (
        "name: About\nareas:\n  Main:\n    - type: html\n      value: {content: '<img src=\"${file:logo.png}\">'}\n"
    )
    content = write_content(tmp_path / "now", {"pages/about.yaml": page_yaml})
    result = run(content, site_file("Logo from the editor"), state)
    [page_action] = result.actions
    assert page_action.depends_on == ()
    assert page_action.blocks[0].after == {"content": '<img src="{CCM:BASE_URL}/application/files/1/logo.png">'}


def test_file_policies_content_and_site_wins(tmp_path: Path) -> None:
    state = file_state(tmp_path, "Logo")
    content = files(tmp_path, "now", "Logo from the content")
    forced = run(content, site_file("Logo from the editor"), state, conflicts=ConflictPolicies(force=True))
    [action] = forced.actions
    assert (action.op, [c.field for c in action.changes]) == ("update", ["title"])
    kept = run(content, site_file("Logo from the editor"), state, conflicts=ConflictPolicies(default="site_wins"))
    assert kept.actions == ()
    assert not kept.held
    assert [c.resolution for c in kept.conflicts] == ["site_wins"]


def test_site_wins_with_new_bytes_holds_the_file(tmp_path: Path) -> None:
    """A new upload takes the content's metadata: the editor's title could not be kept, so nothing is written."""
    state = file_state(tmp_path, "Logo")
    content = files(tmp_path, "now", "Logo from the content", body=b"\x89PNG new logo")
    result = run(content, site_file("Logo from the editor"), state, conflicts=ConflictPolicies(default="site_wins"))
    assert result.actions == ()
    [held] = result.held
    assert held.id == "file:logo.png"
    assert "the site's title cannot be kept" in held.message


def test_file_only_site_changed_is_drift_only_content_changed_is_an_update(tmp_path: Path) -> None:
    state = file_state(tmp_path, "Logo", "The logo.")
    same = files(tmp_path, "same", "Logo")
    kept = run(same, site_file("Logo from the editor"), state)
    assert kept.actions == ()
    assert [(c.id, c.fields) for c in kept.site_changes] == [("file:logo.png", ("title",))]
    [drift] = run(same, site_file("Logo from the editor"), state, drift=REVERT).actions
    assert drift.drift
    assert [(c.field, c.after) for c in drift.changes] == [("title", "Logo")]
    changed = files(tmp_path, "changed", "Logo", "A new description.")
    result = run(changed, site_file("Logo"), state)
    [update] = result.actions
    assert not update.drift
    assert [c.field for c in update.changes] == ["description"]
    assert not result.conflicts
    # the site changed the title, the content the description: the base is reconstructed, no conflict
    both = run(changed, site_file("Logo from the editor"), state, drift=REVERT)
    [mixed] = both.actions
    assert mixed.drift
    assert {c.field for c in mixed.changes} == {"title", "description"}
    assert not both.conflicts
    proposed = run(changed, site_file("Logo from the editor"), state)
    assert [c.field for c in proposed.by_id()["file:logo.png"].changes] == ["description"]
    assert [c.fields for c in proposed.site_changes] == [("title",)]


def test_applied_file_digest_keeps_the_base_while_a_site_wins_field_differs(tmp_path: Path) -> None:
    content = files(tmp_path, "now", "Logo from the content", "New description.")
    spec = content.files["logo.png"]
    live = site_file("Logo from the editor").files["uuid-1"]
    action = Action(kind="file", key="logo.png", op="update", changes=(FieldChange(field="description"),))
    desired = desired_file_meta(spec)
    assert applied_file_digest(desired, action, live, "sha256:old", file_digest(spec)) == "sha256:old"
    everything = action.model_copy(update={"changes": (FieldChange(field="description"), FieldChange(field="title"))})
    assert applied_file_digest(desired, everything, live, "sha256:old", file_digest(spec)) == file_digest(spec)


# --- rendering ----------------------------------------------------------------------------------------------------

GOLDEN = Path(__file__).parent / "golden"


def conflicted_plan(tmp_path: Path) -> Plan:
    """The planner's plan for a user refused under ``fail`` and a file whose conflict a rule lets the content win."""
    state = file_state(tmp_path, "Logo")
    state.record_user("jane", user_state(tmp_path / "user", "jane@base.example").users["jane"])
    content = files(tmp_path, "now", "Logo from the content")
    content = write_content(
        tmp_path / "now", {"users.yaml": JANE.format(email="jane@content.example", language="en_US")}
    )
    observed = Snapshot(
        site_url=BASE,
        home_page_id=1,
        files=site_file("Logo, as the editor named it").files,
        users=site_user("jane@editor.example").users,
    )
    policies = ConflictPolicies(rules=(ConflictRule(match="file:*", policy="content_wins"),))
    return run(content, observed, state, conflicts=policies)


RENDERERS = {
    "asset_conflicts.txt": lambda plan: render_text(plan),
    "asset_conflicts.md": render_markdown,
    "asset_conflicts.json": render_json,
}


@pytest.mark.parametrize("name", sorted(RENDERERS))
def test_user_and_file_conflicts_render_like_page_conflicts(name: str, tmp_path: Path) -> None:
    rendered = RENDERERS[name](conflicted_plan(tmp_path))
    golden = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(rendered)
    assert rendered == golden.read_text(), f"re-run with UPDATE_GOLDEN=1 and review the diff of {golden}"
