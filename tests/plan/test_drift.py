"""``cmssync.plan.drift``: which policy settles an editor's change, and what each does to a page's update."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from cmssync.config import DriftRule, Settings
from cmssync.plan.actions import Action, BlockChange, FieldChange
from cmssync.plan.conflicts import ThreeWay
from cmssync.plan.drift import DriftPolicies, keep_site_changes

RULES = (
    DriftRule(match="page:/legal/*", policy="revert"),
    DriftRule(match="stack:footer-*", fields=["area:*"], policy="adopt"),
)


@pytest.mark.parametrize(
    ("kind", "key", "field", "own", "expected"),
    [
        ("page", "/about", "description", None, "propose"),
        ("page", "/legal/terms", "description", None, "revert"),
        ("page", "/legal/terms", "description", {"description": "adopt"}, "adopt"),
        ("page", "/legal/terms", "name", {"description": "adopt", "*": "propose"}, "propose"),
        ("page", "/legal/terms", "name", {"description": "adopt"}, "revert"),
        ("page", "/about", "name", "revert", "revert"),
        ("stack", "footer-column-1", "area:Main", None, "adopt"),
        ("page", "/!stacks/footer-column-1", "area:Main", None, "propose"),
        ("stack", "footer-column-1", "name", None, "propose"),
    ],
)
def test_the_page_file_then_the_first_rule_then_the_default(
    kind: str, key: str, field: str, own: object, expected: str
) -> None:
    assert DriftPolicies(rules=RULES).resolve(kind, key, field, own) == expected  # type: ignore[arg-type]


def _update() -> Action:
    return Action(
        kind="page",
        key="/about",
        op="update",
        changes=(
            FieldChange(field="name", before="About", after="About us"),
            FieldChange(field="description", before="By the editor", after="From the content"),
        ),
        blocks=(
            BlockChange(area="Main", op="update", position=1, live_position=1, block_type="content", block_id=7,
                        before={"content": "<p>editor</p>"}, after={"content": "<p>content</p>"}),
            BlockChange(area="Main", op="update", position=2, live_position=2, block_type="content", block_id=8,
                        before={"content": "<p>old</p>"}, after={"content": "<p>new</p>"}),
        ),
    )  # fmt: skip


FOUND = ThreeWay(site_fields=frozenset({"description"}), site_blocks={"Main": frozenset({1})})


def test_propose_takes_the_site_changes_out_and_lists_them_from_the_content_to_the_site() -> None:
    kept = keep_site_changes(_update(), FOUND, DriftPolicies(), None, 12)
    assert kept.action is not None
    assert [c.field for c in kept.action.changes] == ["name"]
    assert [b.position for b in kept.action.blocks] == [2]
    assert not kept.action.drift
    [change] = kept.site_changes
    assert (change.action, change.reason, change.live_version_id) == ("propose", "changed_on_site", 12)
    assert [(c.field, c.before, c.after) for c in change.changes] == [
        ("description", "From the content", "By the editor")
    ]
    assert [(b.position, b.before, b.after) for b in change.blocks] == [
        (1, {"content": "<p>content</p>"}, {"content": "<p>editor</p>"})
    ]
    assert change.fields == ("description", "area:Main")


def test_revert_keeps_the_update_whole_and_marks_it_drift() -> None:
    kept = keep_site_changes(_update(), FOUND, DriftPolicies(default="revert"), None, 12)
    assert kept.site_changes == ()
    assert kept.action == _update().model_copy(update={"drift": True})


def test_per_field_policies_split_one_page_into_adopt_propose_and_revert() -> None:
    own = {"description": "adopt", "area:Main": "revert"}
    kept = keep_site_changes(_update(), FOUND, DriftPolicies(), own, None)  # type: ignore[arg-type]
    assert kept.action is not None
    assert [b.position for b in kept.action.blocks] == [1, 2]
    assert kept.action.drift  # the editor's block is written over
    assert [(c.action, c.fields) for c in kept.site_changes] == [("adopt", ("description",))]


def test_owned_areas_are_reverted_whatever_the_policy() -> None:
    kept = keep_site_changes(_update(), FOUND, DriftPolicies(), None, None, areas_owned=True)
    assert kept.action is not None
    assert [b.position for b in kept.action.blocks] == [1, 2]
    assert [c.fields for c in kept.site_changes] == [("description",)]


def test_nothing_left_to_write_is_no_action() -> None:
    only_site = ThreeWay(site_fields=frozenset({"name", "description", "area:Main"}))
    kept = keep_site_changes(_update(), only_site, DriftPolicies(), None, None)
    assert kept.action is None
    assert [c.fields for c in kept.site_changes] == [("name", "description", "area:Main")]


@pytest.mark.parametrize(
    ("value", "policy", "rules"),
    [
        ("revert", "revert", 0),
        ({"policy": "adopt"}, "adopt", 0),
        ({"rules": [{"match": "page:/x", "policy": "revert"}]}, "propose", 1),
    ],
)
def test_the_setting_is_a_word_or_a_mapping(value: object, policy: str, rules: int) -> None:
    settings = Settings.model_validate({"drift": value})
    assert settings.drift_settings.policy == policy
    assert len(settings.drift_settings.rules) == rules
    assert Settings().drift_settings.policy == "propose"


@pytest.mark.parametrize("value", ["ignore", {"policy": "keep"}, {"rules": [{"match": "page:/x"}]}])
def test_a_wrong_drift_setting_is_refused(value: object) -> None:
    with pytest.raises(ValidationError):
        Settings.model_validate({"drift": value})
