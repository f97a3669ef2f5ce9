"""``Site``: a content directory bound to the sandbox, with plan and apply as library calls; the example content."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from cmssync.commands.pull import run_pull
from cmssync.emulator.embedded import Sandbox
from cmssync.plan.actions import Plan
from cmssync.plan.request import PlanRequest
from cmssync.render.text import render_text
from cmssync.sync.applying import ApplyReport, ApplyRequest, apply_site
from cmssync.sync.planning import make_plan
from cmssync.sync.workspace import Workspace, open_workspace

EXAMPLE = Path(__file__).resolve().parents[2] / "content-example"
PASSWORDS = {"JANE_EDITOR_PASSWORD": "jane-secret-1", "SAM_WRITER_PASSWORD": "sam-secret-1"}


def copy_example(root: Path, monkeypatch: pytest.MonkeyPatch | None = None) -> Path:
    """Copy the example content to ``root``, without its state; with ``monkeypatch``, also put the example users'
    passwords in the environment (the content reads them from there)."""
    if monkeypatch is not None:
        for name, value in PASSWORDS.items():
            monkeypatch.setenv(name, value)
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".cmssync"))
    return root


class Site:
    """A content directory bound to the sandbox, with plan/apply helpers."""

    @classmethod
    def seeded(
        cls, sandbox: Sandbox, tmp_path: Path, seed: dict[str, Any], *, name: str = "site", handle: str | None = None
    ) -> Site:
        """An empty content directory ``tmp_path/name`` on the sandbox reset to ``seed`` (its seed format, concrete
        dialect); ``handle``: the directory is that site of the installation (``site.handle``)."""
        seed_file = tmp_path / "seed.json"
        seed_file.write_text(json.dumps(seed), encoding="utf-8")
        sandbox.reset(seed=str(seed_file), dialect="concrete")
        root = tmp_path / name
        root.mkdir()
        return cls(root, sandbox, handle=handle)

    async def pull(self) -> str:
        """``cmssync pull`` into the directory (must succeed); its summary."""
        out = io.StringIO()
        assert await run_pull(self.root, out=out, overrides=self.overrides()) == 0, out.getvalue()
        return out.getvalue()

    def __init__(self, root: Path, sandbox: Sandbox, *, handle: str | None = None) -> None:
        self.root = root
        self.sandbox = sandbox
        self.handle = handle
        self.state_path = root.parent / f"{root.name}-state" / "state.json"

    def overrides(self) -> dict[str, Any]:
        return {
            "site": {
                "url": self.sandbox.url,
                "api_prefix": "/ccm/api/1.0",
                **({"handle": self.handle} if self.handle else {}),
            },
            "auth": {
                "grant": "password",
                "client_id": self.sandbox.client_id,
                "client_secret": self.sandbox.client_secret,
                "username": self.sandbox.admin_username,
                "password": self.sandbox.admin_password,
                "token_store": str(self.state_path.parent / "tokens.json"),
            },
            "state": str(self.state_path),
        }

    def workspace(self) -> Workspace:
        return open_workspace(self.root, overrides=self.overrides())

    async def plan(self, **kwargs: Any) -> Plan:
        return (await make_plan(self.workspace(), PlanRequest(**kwargs))).plan

    async def apply(self, plan_file: Path | None = None, **kwargs: Any) -> ApplyReport:
        """Apply without asking; ``last_output`` holds the plan and one line per outcome."""
        lines: list[str] = []
        request = ApplyRequest(PlanRequest(**kwargs), plan_file=plan_file)
        report = await apply_site(self.workspace(), request, on_outcome=lambda outcome: lines.append(outcome.line()))
        self.last_output = "\n".join([render_text(report.plan), *lines, *report.problems])
        return report

    def write(self, relative: str, text: str) -> None:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def edit(self, relative: str, old: str, new: str) -> None:
        """Replace ``old`` (which must be there) with ``new`` in a content file."""
        path = self.root / relative
        text = path.read_text(encoding="utf-8")
        assert old in text, (relative, old)
        path.write_text(text.replace(old, new), encoding="utf-8")


def requests_by_route(sandbox: Sandbox) -> dict[str, int]:
    """The requests the sandbox answered since its statistics were last cleared, by route."""
    return {route: int(count) for route, count in sandbox.stats()["by_route"].items()}


async def pulled_site(tmp_path: Path, sandbox: Sandbox, generate: str) -> Site:
    """A site the sandbox generates (``generate``: its ``pages=…,blocks=…`` spec), pulled into ``tmp_path/site``."""
    sandbox.reset(seed="empty", generate=generate)
    root = tmp_path / "site"
    root.mkdir()
    site = Site(root, sandbox)
    assert await run_pull(root, out=io.StringIO(), overrides=site.overrides()) == 0
    return site


def sandbox_environment(sandbox: Sandbox, state: Path) -> dict[str, str]:
    """The ``CMSSYNC_*`` variables that point cmssync at ``sandbox`` with its admin, and at the state file ``state``,
    as a container or a CI job would set them."""
    return {
        "CMSSYNC_URL": sandbox.url,
        "CMSSYNC_CLIENT_ID": sandbox.client_id,
        "CMSSYNC_CLIENT_SECRET": sandbox.client_secret,
        "CMSSYNC_USERNAME": sandbox.admin_username,
        "CMSSYNC_PASSWORD": sandbox.admin_password,
        "CMSSYNC_STATE": str(state),
    }


def set_sandbox_environment(monkeypatch: pytest.MonkeyPatch, sandbox: Sandbox, state_dir: Path) -> None:
    """Point every command of the test at ``sandbox`` through the environment, as CI does: the ``CMSSYNC_*``
    variables (state and token store under ``state_dir``), the example users' passwords, no ``CMSSYNC_CONFIG``."""
    environment = {**PASSWORDS, **sandbox_environment(sandbox, state_dir / "state.json")}
    for name, value in {**environment, "CMSSYNC_TOKEN_STORE": str(state_dir / "tokens.json")}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CMSSYNC_CONFIG", raising=False)
