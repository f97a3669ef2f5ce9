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


async def test_a_user_changed_only_on_the_site_is_drift_and_reverted(example: Site, editor: AccountEditor) -> None:
    assert not (await example.apply()).failed
    editor.edit_user("jane.editor", email="jane@editor.example")
    plan = await example.plan()
    action = plan.by_id()["user:jane.editor"]
    assert action.drift
    assert not plan.conflicts
    assert (await example.apply()).exit_code == 0
    assert editor.user("jane.editor")["email"] == "jane.editor@example.com"


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
