"""Fault rules and the seeded dice that decide when they fire.

Rule syntax: ``KIND:PROBABILITY[:key=value…]``, e.g. ``500:0.1``, ``429:0.05:retry-after=1``,
``latency:1:ms=250:method=GET``, ``drop:0.2:path=/ccm/api/1.0/pages*``, ``commit-then-500:1:times=1``,
``500:1:path=/ccm/api/1.0/pages/8$:query=areas.content`` (a read that renders the page fails, as a theme template
that breaks outside a page makes it on a real site; the same read without the render answers).

Kinds: ``latency`` (``ms=``, default 100), ``500``, ``503``, ``429`` (``retry-after=`` seconds, default 1),
``drop`` (close the connection without an answer), ``404`` (the CMS's "Page Not Found" page, as for a file whose
bytes were removed from the storage), ``commit-then-500`` (do the change, then answer 500), ``commit-then-429``
(do the change, then answer 429, as a rate limiter placed after the application would) and ``revoke-token``
(revoke the caller's bearer token, then answer 401 "Access token has been revoked"; requests without a bearer
token pass untouched).

Filters and options: ``method=POST`` (comma list allowed), ``path=`` (a glob when it contains ``*``, ``?`` or
``[``; otherwise a regular expression searched in the path), ``query=`` (a regular expression searched in the
decoded query string), ``times=N`` (fire at most N times; ``times=1`` is a
one-shot fault) and ``seed=N`` (reseed the dice so a fault run can be repeated). Latency rules add up; of the other
rules the first one that fires decides the answer.
"""

from __future__ import annotations

import fnmatch
import random
import re
from dataclasses import dataclass, field

KINDS = ("latency", "404", "500", "503", "429", "drop", "commit-then-500", "commit-then-429", "revoke-token")


class FaultRuleError(ValueError):
    """A rule that cannot be parsed; the message says why."""


@dataclass
class FaultRule:
    kind: str
    probability: float
    raw: str
    methods: frozenset[str] | None = None
    path: re.Pattern[str] | None = None
    query: re.Pattern[str] | None = None
    options: dict[str, str] = field(default_factory=dict)
    remaining: int | None = None

    def applies_to(self, method: str, path: str, query: str = "") -> bool:
        if self.remaining is not None and self.remaining <= 0:
            return False
        if self.methods is not None and method.upper() not in self.methods:
            return False
        if self.query is not None and self.query.search(query) is None:
            return False
        return self.path is None or self.path.search(path) is not None

    @property
    def latency_ms(self) -> int:
        return int(self.options.get("ms", "100"))

    @property
    def retry_after(self) -> str:
        return self.options.get("retry-after", "1")


def parse_rule(text: str) -> tuple[FaultRule, int | None]:
    """A rule and the ``seed=`` it carries (if any)."""
    parts = text.strip().split(":")
    if len(parts) < 2:
        raise FaultRuleError(f"fault rule {text!r}: expected KIND:PROBABILITY[:key=value…]")
    kind, probability_text = parts[0].strip().lower(), parts[1].strip()
    if kind not in KINDS:
        raise FaultRuleError(f"fault rule {text!r}: unknown kind {kind!r} (one of {', '.join(KINDS)})")
    try:
        probability = float(probability_text)
    except ValueError:
        raise FaultRuleError(f"fault rule {text!r}: probability {probability_text!r} is not a number") from None
    if not 0.0 <= probability <= 1.0:
        raise FaultRuleError(f"fault rule {text!r}: probability must be between 0 and 1")
    rule = FaultRule(kind=kind, probability=probability, raw=text.strip())
    seed: int | None = None
    # Options are key=value; a path may itself contain ':' so later parts without '=' continue the previous value.
    options: list[list[str]] = []
    for part in parts[2:]:
        if "=" in part:
            key, _, value = part.partition("=")
            options.append([key.strip().lower(), value])
        elif options:
            options[-1][1] += ":" + part
        else:
            raise FaultRuleError(f"fault rule {text!r}: option {part!r} is not key=value")
    for key, value in options:
        if key == "method":
            rule.methods = frozenset(m.strip().upper() for m in value.split(",") if m.strip())
        elif key == "path":
            rule.path = _path_pattern(value)
        elif key == "query":
            rule.query = _pattern("query", value)
        elif key == "seed":
            seed = _int_option(text, key, value)
        elif key == "times":
            rule.remaining = _int_option(text, key, value)
        elif key in ("ms", "retry-after"):
            _int_option(text, key, value)
            rule.options[key] = value
        else:
            raise FaultRuleError(f"fault rule {text!r}: unknown option {key!r}")
    return rule, seed


def _int_option(text: str, key: str, value: str) -> int:
    if not value.strip().isdigit():
        raise FaultRuleError(f"fault rule {text!r}: {key} must be a whole number")
    return int(value)


def _path_pattern(value: str) -> re.Pattern[str]:
    if any(ch in value for ch in "*?["):
        return re.compile(fnmatch.translate(value))
    return _pattern("path", value)


def _pattern(key: str, value: str) -> re.Pattern[str]:
    try:
        return re.compile(value)
    except re.error as exc:
        raise FaultRuleError(f"{key} {value!r} is not a valid regular expression: {exc}") from None


@dataclass
class Decision:
    latency_ms: int = 0
    fault: FaultRule | None = None


class FaultEngine:
    """The active rules, a global latency and the seeded random generator."""

    def __init__(self, latency_ms: int = 0, seed: int | None = None) -> None:
        self.rules: list[FaultRule] = []
        self.latency_ms = latency_ms
        self.seed = seed
        self.rng = random.Random(seed)

    def set_rules(self, texts: list[str], seed: int | None = None, *, replace: bool = True) -> None:
        parsed = [parse_rule(t) for t in texts]  # parse everything first: a bad rule changes nothing
        if replace:
            self.rules = []
        for rule, rule_seed in parsed:
            self.rules.append(rule)
            seed = rule_seed if rule_seed is not None else seed
        if seed is not None or replace:
            self.seed = seed if seed is not None else self.seed
            self.rng = random.Random(self.seed)

    def clear(self) -> None:
        self.rules = []

    def decide(self, method: str, path: str, query: str = "") -> Decision:
        decision = Decision(latency_ms=self.latency_ms)
        for rule in self.rules:
            if not rule.applies_to(method, path, query):
                continue
            if rule.kind != "latency" and decision.fault is not None:
                continue
            if self.rng.random() >= rule.probability:
                continue
            if rule.remaining is not None:
                rule.remaining -= 1
            if rule.kind == "latency":
                decision.latency_ms += rule.latency_ms
            else:
                decision.fault = rule
        return decision

    def describe(self) -> dict[str, object]:
        return {
            "rules": [r.raw for r in self.rules],
            "remaining": [r.remaining for r in self.rules],
            "seed": self.seed,
            "latency_ms": self.latency_ms,
        }
