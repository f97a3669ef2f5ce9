"""Content directories for the reliability tests and the loop that applies one until it converges.

``ReliabilitySite`` is the e2e ``Site`` (a content copy pointed at the session sandbox through settings overrides)
with a few more settings: concurrency (1 makes a faulty run repeatable, see ``conftest.py``) and prune guards.
``write_generated_content`` writes a deterministic site of any size: sections of pages with content blocks, small
text files, users and groups.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cmssync.content.site import SiteContent
from cmssync.emulator.embedded import Sandbox
from cmssync.state import http_backend
from cmssync.state.records import State
from cmssync.state.store import StateStore
from tests.support.sites import Site, sandbox_environment

USER_PASSWORD_ENV = "RELIABILITY_USER_PASSWORD"
USER_PASSWORD = "reliability-user-pw-1"
FAULT_STATUSES = ("0", "429", "500", "503")
"""Answers only an injected fault gives on these sites (0: the connection was dropped without an answer)."""


def _merge(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in top.items():
        merged[key] = _merge(merged[key], value) if isinstance(value, Mapping) and key in merged else value
    return merged


class ReliabilitySite(Site):
    def __init__(self, root: Path, sandbox: Sandbox, *, settings: Mapping[str, Any] | None = None) -> None:
        super().__init__(root, sandbox)
        self.settings = dict(settings or {})

    def overrides(self) -> dict[str, Any]:
        return _merge(super().overrides(), self.settings)

    def content(self) -> SiteContent:
        return self.workspace().content

    def state(self) -> State:
        return StateStore(self.state_path).load()


@dataclass
class Convergence:
    """What happened over the applies of one scenario."""

    runs: int = 0
    failures: list[str] = field(default_factory=list)
    remaining: list[str] = field(default_factory=list)
    converged_after: int | None = None
    """Number of applies after which the plan (faults off) was empty; None if it never was."""


async def apply_until_converged(site: ReliabilitySite, *, max_runs: int, faults: list[str], seed: int) -> Convergence:
    """Apply up to ``max_runs`` times under ``faults``; after each run, plan without faults to see if it is done.

    A run may fail (an action, or the whole run at the token endpoint): that is allowed, the next run goes on.
    """
    result = Convergence()
    sandbox = site.sandbox
    try:
        for run in range(1, max_runs + 1):
            result.runs = run
            sandbox.set_faults(faults, seed=seed * 1000 + run)
            try:
                report = await site.apply()
            except Exception as exc:  # a whole run failed (e.g. the token endpoint answered 500): try again
                result.failures.append(f"run {run}: {type(exc).__name__}: {exc}")
            else:
                result.failures += [f"run {run}: {o.line()}" for o in report.outcomes if o.status != "ok"]
                result.failures += [f"run {run}: problem: {p}" for p in report.problems]
            sandbox.clear_faults()
            plan = await site.plan()
            result.remaining = [f"{a.kind} {a.key} ({a.op})" for a in plan.actions]
            if not plan.actions:
                result.converged_after = run
                return result
    finally:
        sandbox.clear_faults()
    return result


def fault_answers(stats: Mapping[str, Any]) -> int:
    """Injected faults that answered (or dropped) a request, from the sandbox's statistics."""
    by_status = stats["by_status"]
    revoked = sum(r["count"] for r in stats["requests"] if r["status"] == 401 and r["route"] != "/oauth/2.0/token")
    return sum(int(by_status.get(status, 0)) for status in FAULT_STATUSES) + revoked


def write_settings(root: Path, **sections: Any) -> None:
    """A ``cmssync.yaml`` (JSON is YAML) holding no secret: those come from the environment."""
    settings: dict[str, Any] = {
        "site": {"url": "http://127.0.0.1:9"},
        "auth": {"grant": "password", "client_id": "sandbox", "username": "admin"},
        "publish": "approve",
        "prune": {"enabled": False, "max_deletes": 10, "max_fraction": 0.25},
        "protect": {"pages": ["/"], "users": ["admin"]},
        "versions": {"keep": 10},
    }
    (root / "cmssync.yaml").write_text(json.dumps(_merge(settings, sections), indent=2) + "\n", encoding="utf-8")


def write_generated_content(
    root: Path,
    *,
    sections: int,
    pages_per_section: int,
    blocks: int,
    files: int = 0,
    users: int = 0,
    groups: int = 0,
    settings: Mapping[str, Any] | None = None,
) -> None:
    """Sections ``/rel-section-S`` each with children ``/rel-section-S/page-N``; every page has ``blocks``
    content blocks in ``Main``; files ``files/notes/note-N.txt``; users ``reluserN``; groups ``Reliability N``."""
    root.mkdir(parents=True, exist_ok=True)
    write_settings(root, **dict(settings or {}))
    pages = root / "pages"
    for section in range(1, sections + 1):
        (pages / f"rel-section-{section}").mkdir(parents=True, exist_ok=True)
        _write_page(pages / f"rel-section-{section}.yaml", f"Reliability section {section}", blocks, section * 1000)
        for number in range(1, pages_per_section + 1):
            path = pages / f"rel-section-{section}" / f"page-{number}.yaml"
            _write_page(path, f"Reliability page {section}.{number}", blocks, section * 1000 + number)
    if files:
        notes = root / "files" / "notes"
        notes.mkdir(parents=True, exist_ok=True)
        for number in range(1, files + 1):
            (notes / f"note-{number}.txt").write_text(f"reliability note {number}\n" * number, encoding="utf-8")
    if users:
        (root / "users.yaml").write_text(
            "".join(
                f"- username: reluser{n}\n  email: reluser{n}@example.com\n  password: ${{env:{USER_PASSWORD_ENV}}}\n"
                for n in range(1, users + 1)
            ),
            encoding="utf-8",
        )
    if groups:
        (root / "groups.yaml").write_text(
            "".join(f"- name: Reliability {n}\n" for n in range(1, groups + 1)), encoding="utf-8"
        )


def _write_page(path: Path, name: str, blocks: int, seed: int) -> None:
    lines = [f"name: {name}", f"description: Page {seed} of the reliability site", "areas:", "  Main:"]
    for number in range(1, blocks + 1):
        lines += ["    - type: content", f'      value: {{content: "<p>Block {number} of page {seed}.</p>"}}']
    if not blocks:
        lines[-1] = "  Main: []"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def cli_environment(
    site: ReliabilitySite,
    monkeypatch: pytest.MonkeyPatch,
    *,
    client_secret: str | None = None,
    password: str | None = None,
) -> ReliabilitySite:
    """Point the command line at ``site``'s sandbox and state through the environment, as a container would."""
    sandbox = site.sandbox
    monkeypatch.setenv("CMSSYNC_URL", sandbox.url)
    monkeypatch.setenv("CMSSYNC_CLIENT_SECRET", client_secret or sandbox.client_secret)
    monkeypatch.setenv("CMSSYNC_PASSWORD", password or sandbox.admin_password)
    monkeypatch.setenv("CMSSYNC_STATE", str(site.state_path))
    return site


def state_server_site(
    root: Path, sandbox: Sandbox, state: Mapping[str, Any], monkeypatch: pytest.MonkeyPatch, page: str = "index"
) -> Path:
    """One page at ``pages/PAGE.yaml`` on the sandbox (credentials from the environment, as a container has them)
    with the state mapping ``state`` (a test's HTTP state server); the state server's retry waits are zero."""
    monkeypatch.setattr(http_backend, "_RETRY_WAITS", (0.0, 0.0))
    (root / "pages").mkdir(parents=True)
    (root / "pages" / f"{page}.yaml").write_text(f"name: {page.replace('-', ' ').capitalize()}\n", encoding="utf-8")
    write_settings(root, state=dict(state))
    for name, value in sandbox_environment(sandbox, root / "unused-state.json").items():
        if name != "CMSSYNC_STATE":
            monkeypatch.setenv(name, value)
    return root
