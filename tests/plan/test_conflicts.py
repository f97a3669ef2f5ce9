"""Conflict rules (``conflicts.rules``) name objects by ``KIND:KEY``; a stack answers to ``stack:<handle>`` and, as
rules written before stacks were a kind of their own named it, to its page ``page:/!stacks/<handle>``."""

from __future__ import annotations

from cmssync.config import ConflictRule
from cmssync.plan.conflicts import ConflictPolicies


def _policies(match: str) -> ConflictPolicies:
    return ConflictPolicies(rules=(ConflictRule(match=match, policy="site_wins"),), default="fail")


def test_a_stack_matches_its_kind_and_its_page_form() -> None:
    for match in ("stack:footer", "stack:*", "page:/!stacks/footer", "page:/*"):
        assert _policies(match).resolve("stack", "footer", "area:Main") == "site_wins", match
    assert _policies("stack:header").resolve("stack", "footer", "area:Main") == "fail"


def test_a_page_does_not_match_a_stack_rule() -> None:
    assert _policies("stack:*").resolve("page", "/about", "description") == "fail"
    assert _policies("page:/*").resolve("page", "/about", "description") == "site_wins"
