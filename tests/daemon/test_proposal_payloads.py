"""Notifications carry values, not only field names (issue 34 item 3): a drift event's objects have each field's
value before and after, clipped; a proposal's event names the branch, the commit and the push."""

from __future__ import annotations

import json

from cmssync.daemon.events import Event, EventObject, Proposal, field_values
from cmssync.daemon.payloads import MAX_VALUE, json_document, render
from cmssync.plan.actions import Action, BlockChange, FieldChange
from cmssync.sync.pulled_changes import FieldValues

LONG = "<p>" + "x" * 2000 + "</p>"


def proposal_event() -> Event:
    values = (
        FieldValues("areas.Main[1].value.content", "<p>Old words</p>", "<p>New words</p>"),
        FieldValues("description", "short", LONG),
    )
    return Event(
        "change_proposed",
        "Proposed 1 site change on branch site-edits (commit abc): page:/about",
        "run-1",
        "proposal",
        "enforce",
        objects=(
            EventObject("page", "/about", "propose", tuple(v.field for v in values), "site version 7", values=values),
        ),
        total=1,
        proposal=Proposal("site-edits", "a" * 40, "origin", "[new branch]", "https://forge/pull/1"),
    )


def test_the_json_document_has_the_branch_the_commit_and_the_values_before_and_after() -> None:
    document = json_document(proposal_event(), "https://example.com")
    assert document["event"] == "change_proposed"
    assert document["proposal"] == {
        "branch": "site-edits",
        "commit": "a" * 40,
        "remote": "origin",
        "pushed": "[new branch]",
        "pull_request": "https://forge/pull/1",
    }
    values = document["objects"][0]["values"]
    assert values[0] == {
        "field": "areas.Main[1].value.content",
        "before": "<p>Old words</p>",
        "after": "<p>New words</p>",
    }
    assert len(values[1]["after"]) == MAX_VALUE
    assert values[1]["after"].endswith("…")


def test_the_slack_message_shows_the_branch_the_commit_and_the_values() -> None:
    document = json.loads(render(proposal_event(), "https://example.com", "slack"))
    text = "\n".join(block["text"]["text"] for block in document["blocks"] if block["type"] == "section")
    assert "branch `site-edits`, commit `aaaaaaaaaaaa`, pushed to `origin`" in text
    assert 'areas.Main[1].value.content: `"&lt;p&gt;Old words&lt;/p&gt;"` → `"&lt;p&gt;New words&lt;/p&gt;"`' in text
    assert "x" * 200 not in text, "long values are cut"


def test_a_drift_action_gives_its_values_and_never_a_passwords() -> None:
    action = Action(
        kind="page",
        key="/about",
        op="update",
        drift=True,
        changes=(FieldChange(field="name", before="Site name", after="Content name"),),
        blocks=(
            BlockChange(
                area="Main",
                op="update",
                position=1,
                block_type="content",
                before={"content": "a"},
                after={"content": "b"},
            ),
        ),
    )
    assert field_values(action.changes, action.blocks) == (
        FieldValues("name", "Site name", "Content name"),
        FieldValues("Main#1 (update content)", {"content": "a"}, {"content": "b"}),
    )
    user = Action(kind="user", key="jane", op="update", changes=(FieldChange(field="password", sensitive=True),))
    assert field_values(user.changes, user.blocks) == ()
