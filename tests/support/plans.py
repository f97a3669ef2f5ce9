"""A small plan of every kind of change, for the renderers' tests (text, JSON, markdown)."""

from __future__ import annotations

from collections.abc import Mapping

from cmssync.plan.actions import Action, BlockChange, FieldChange, Plan, Precondition

SECRET = "hunter2-do-not-print"
"""A password in the plan: no rendering may show it."""


def content_update(block_id: int, before: Mapping[str, str], after: Mapping[str, str]) -> BlockChange:
    """An update of the first content block of the area ``Main`` (its live id ``block_id``)."""
    return BlockChange(
        area="Main",
        op="update",
        position=0,
        block_type="content",
        block_id=block_id,
        before=dict(before),
        after=dict(after),
    )


def sample_plan() -> Plan:
    return Plan(
        site="https://www.example.com",
        content_digest="0f" * 32,
        actions=(
            Action(
                kind="group",
                key="Content Team",
                op="create",
                changes=(FieldChange(field="name", after="Content Team"),),
            ),
            Action(
                kind="file",
                key="images/logo.png",
                op="replace",
                changes=(FieldChange(field="sha256", before="sha256:aa", after="sha256:bb"),),
                note="the new file is uploaded, pages are re-pointed to it, then the old file is deleted",
            ),
            Action(
                kind="page",
                key="/about",
                op="update",
                drift=True,
                precondition=Precondition(remote_id="157", live_version_id=4),
                changes=(
                    FieldChange(field="name", before="About", after="About us"),
                    FieldChange(field="attributes.exclude_nav", before=True, after=False),
                ),
                blocks=(
                    content_update(
                        12,
                        {"content": "<h1>About</h1>\n<p>We build sites.</p>\n<p>Since 2014.</p>"},
                        {"content": "<h1>About us</h1>\n<p>We build sites.</p>\n<p>Since 2014.</p>"},
                    ),
                    BlockChange(area="Sidebar", op="delete", position=1, block_type="html", block_id=19),
                    BlockChange(area="Main", op="add", position=3, block_type="html", after={"content": "<hr>"}),
                ),
            ),
            Action(kind="page", key="/old-news", op="delete", precondition=Precondition(remote_id="160")),
            Action(
                kind="user",
                key="jane.editor",
                op="update",
                changes=(
                    FieldChange(field="email", before="jane@old.example", after="jane@example.com"),
                    FieldChange(field="password", before=SECRET, after=SECRET, sensitive=True),
                ),
            ),
        ),
        warnings=(
            "groups managed before but no longer in the content, left on the site (the API deletes no group): "
            "Reviewers",
        ),
    )
