"""Users and files changed both on the sandbox and in the content (issue 16 part 1): a conflict, refused by
default, nothing overwritten; ``site_wins`` keeps the editor's value run after run. The "editor" writes through the
REST API, as the dashboard would."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator

import pytest

from cmssync.commands.plan import run_plan
from cmssync.emulator.embedded import Sandbox
from cmssync.plan.request import PlanRequest
from cmssync.render.text import render_text
from tests.support.editors import AccountEditor
from tests.support.sites import Site
from tests.support.tokens import sandbox_token


@pytest.fixture
def editor(sandbox: Sandbox) -> Iterator[AccountEditor]:
    with contextlib.closing(AccountEditor(sandbox)) as person:
        yield person


async def test_a_user_changed_on_the_site_and_in_users_yaml_is_refused(example: Site, editor: AccountEditor) -> None:
    assert not (await example.apply()).failed
    editor.edit_user("jane.editor", email="jane@editor.example")
    example.edit("users.yaml", "jane.editor@example.com", "jane@content.example")

    plan = await example.plan()
    assert [h.id for h in plan.held] == ["user:jane.editor"]
    [conflict] = plan.conflicts
    assert (conflict.field, conflict.content, conflict.site, conflict.base_known) == (
        "email",
        "jane@content.example",
        "jane@editor.example",
        False,
    )
    assert "user:jane.editor" not in plan.by_id()
    text = render_text(plan)
    assert "! user jane.editor: refused" in text
    assert "conflict email (fail)" in text
    code = await run_plan(example.workspace(), PlanRequest(), out=io.StringIO(), detailed_exitcode=True)
    assert code == 2

    report = await example.apply()
    assert report.exit_code == 1
    assert editor.user("jane.editor")["email"] == "jane@editor.example"

    assert (await example.apply(force=True)).exit_code == 0
    assert editor.user("jane.editor")["email"] == "jane@content.example"
    assert (await example.plan()).is_empty


async def test_a_user_changed_only_on_the_site_is_kept_by_default_and_reverted_under_revert(
    example: Site, editor: AccountEditor
) -> None:
    """The drift policy covers users as pages: under the default ``propose`` an editor's change to a managed user's
    email is listed as a site change and not written over (it was reverted whatever the policy); the content's own
    change to another user still applies; ``drift: revert`` writes the content's value back."""
    assert not (await example.apply()).failed
    editor.edit_user("jane.editor", email="jane@editor.example")
    example.edit("users.yaml", "sam.writer@example.com", "sam@content.example")
    plan = await example.plan()
    assert not plan.conflicts
    assert "user:jane.editor" not in plan.by_id()
    [change] = plan.site_changes
    assert (change.id, change.action, change.fields) == ("user:jane.editor", "propose", ("email",))
    assert (change.changes[0].before, change.changes[0].after) == ("jane.editor@example.com", "jane@editor.example")
    assert "= site change (propose): user jane.editor: email changed on the site" in render_text(plan)
    assert (await example.apply()).exit_code == 0
    assert editor.user("jane.editor")["email"] == "jane@editor.example"
    assert editor.user("sam_writer")["email"] == "sam@content.example"
    assert [c.id for c in (await example.plan()).site_changes] == ["user:jane.editor"]  # listed until brought back

    settings = (example.root / "cmssync.yaml").read_text()
    example.write("cmssync.yaml", settings + "drift: revert\n")
    plan = await example.plan()
    assert plan.by_id()["user:jane.editor"].drift
    assert not plan.site_changes
    assert (await example.apply()).exit_code == 0
    assert editor.user("jane.editor")["email"] == "jane.editor@example.com"


async def test_a_users_site_change_taken_into_the_content_closes_the_loop(example: Site, editor: AccountEditor) -> None:
    """Once ``users.yaml`` takes the editor's email the plan is empty and apply records the user's new digest, so a
    later change of the content to the same user is an ordinary update (not a conflict with a base no longer
    known). ``drift: adopt`` proposes a user's change, said in a warning (pull writes ``users.yaml`` whole)."""
    assert not (await example.apply()).failed
    editor.edit_user("jane.editor", email="jane@editor.example")
    settings = (example.root / "cmssync.yaml").read_text()
    example.write("cmssync.yaml", settings + "drift: adopt\n")
    plan = await example.plan()
    assert [(c.id, c.action) for c in plan.site_changes] == [("user:jane.editor", "propose")]
    assert any("user jane.editor: drift: adopt writes pages and stacks" in w for w in plan.warnings)

    example.edit("users.yaml", "jane.editor@example.com", "jane@editor.example")
    plan = await example.plan()
    assert plan.is_empty
    assert [(r.id, r.base) for r in plan.rebase] == [("user:jane.editor", None)]
    assert (await example.apply()).exit_code == 0
    assert (await example.plan()).rebase == ()
    example.edit("users.yaml", "language: en_US", "language: de_DE")
    plan = await example.plan()
    assert not plan.conflicts
    assert [c.field for c in plan.by_id()["user:jane.editor"].changes] == ["language"]


async def test_a_files_title_changed_on_the_site_is_kept_and_a_new_upload_is_held(
    example: Site, editor: AccountEditor
) -> None:
    """A managed file's metadata changed on the site only is a site change under ``propose``; new bytes in the
    content would upload a copy with the content's title, so the file is held rather than the title lost."""
    assert not (await example.apply()).failed
    file_id = str(example.workspace().load_state().files["images/logo.png"].id)
    editor.edit_file(file_id, title="Logo, as the editor named it")
    plan = await example.plan()
    assert "file:images/logo.png" not in plan.by_id()
    assert [(c.id, c.fields) for c in plan.site_changes] == [("file:images/logo.png", ("title",))]
    assert (await example.apply()).exit_code == 0
    assert editor.file(file_id)["title"] == "Logo, as the editor named it"

    (example.root / "files" / "images" / "logo.png").write_bytes(b"\x89PNG new bytes")
    plan = await example.plan()
    [held] = plan.held
    assert held.id == "file:images/logo.png"
    assert "the site's title cannot be kept" in held.message
    assert (await example.apply()).exit_code == 1
    assert editor.file(file_id)["title"] == "Logo, as the editor named it"


async def test_site_wins_keeps_an_editors_file_title_run_after_run(example: Site, editor: AccountEditor) -> None:
    assert not (await example.apply()).failed
    file_id = str(example.workspace().load_state().files["images/logo.png"].id)
    editor.edit_file(file_id, title="Logo, as the editor named it")
    example.edit("files/images/logo.png.yaml", "title: Example Co. logo", "title: Logo from the content")
    settings = (example.root / "cmssync.yaml").read_text()
    example.write("cmssync.yaml", settings + "conflicts:\n  rules:\n    - {match: 'file:*', policy: site_wins}\n")

    plan = await example.plan()
    assert not plan.held
    assert [(c.id, c.field, c.resolution) for c in plan.conflicts] == [("file:images/logo.png", "title", "site_wins")]
    assert "file:images/logo.png" not in plan.by_id()
    assert (await example.apply()).exit_code == 0
    assert editor.file(file_id)["title"] == "Logo, as the editor named it"
    again = await example.plan()  # the same conflict, settled the same way: no drift, nothing to write
    assert "file:images/logo.png" not in again.by_id()
    assert [c.resolution for c in again.conflicts] == ["site_wins"]


async def test_site_wins_on_the_email_still_sets_a_new_password_and_keeps_the_editors_email(
    example: Site, editor: AccountEditor, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not (await example.apply()).failed
    editor.edit_user("jane.editor", email="jane@editor.example")
    example.edit("users.yaml", "jane.editor@example.com", "jane@content.example")
    monkeypatch.setenv("JANE_EDITOR_PASSWORD", "a-new-Passw0rd-for-jane")
    settings = (example.root / "cmssync.yaml").read_text()
    example.write("cmssync.yaml", settings + "conflicts:\n  policy: site_wins\n")

    plan = await example.plan()
    action = plan.by_id()["user:jane.editor"]
    assert [c.field for c in action.changes] == ["password"]
    assert [(c.field, c.resolution) for c in plan.conflicts] == [("email", "site_wins")]
    assert (await example.apply()).exit_code == 0
    assert editor.user("jane.editor")["email"] == "jane@editor.example"
    token = sandbox_token(
        example.sandbox, "users:read", username="jane.editor", password="a-new-Passw0rd-for-jane"
    )  # the new password works
    assert token
    again = await example.plan()  # the recorded digest was kept: the same conflict, not drift to revert
    assert "user:jane.editor" not in again.by_id()
    assert [(c.field, c.resolution) for c in again.conflicts] == [("email", "site_wins")]
