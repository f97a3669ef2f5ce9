"""End-to-end fixtures: a copy of a content directory pointed at the session sandbox, and a raw HTTP view of it.

``RawSite`` reads the emulated site with plain httpx and its own token, never through cmssync's client or
observer, so a bug there cannot hide a wrong site.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.plan.actions import Plan
from cmssync.plan.report import render_text
from cmssync.plan.request import PlanRequest
from cmssync.sync.applying import ApplyReport, ApplyRequest, apply_site
from cmssync.sync.planning import make_plan
from cmssync.sync.workspace import Workspace, open_workspace

EXAMPLE = Path(__file__).resolve().parents[2] / "content-example"
PASSWORDS = {"JANE_EDITOR_PASSWORD": "jane-secret-1", "SAM_WRITER_PASSWORD": "sam-secret-1"}


class Site:
    """A content directory bound to the sandbox, with plan/apply helpers."""

    def __init__(self, root: Path, sandbox: Sandbox) -> None:
        self.root = root
        self.sandbox = sandbox
        self.state_path = root.parent / f"{root.name}-state" / "state.json"

    def overrides(self) -> dict[str, Any]:
        return {
            "site": {"url": self.sandbox.url, "api_prefix": "/ccm/api/1.0"},
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


class RawSite:
    """Plain HTTP reads of the sandbox, independent of cmssync's client."""

    def __init__(self, sandbox: Sandbox) -> None:
        token = httpx.post(
            f"{sandbox.url}/oauth/2.0/token",
            data={
                "grant_type": "password",
                "client_id": sandbox.client_id,
                "client_secret": sandbox.client_secret,
                "username": sandbox.admin_username,
                "password": sandbox.admin_password,
                "scope": "pages:read users:read groups:read files:read pages:versions:read",
            },
        ).json()["access_token"]
        self.http = httpx.Client(base_url=sandbox.api_url, headers={"Authorization": f"Bearer {token}"})

    def get(self, path: str, **params: Any) -> Any:
        response = self.http.get(path, params=params)
        response.raise_for_status()
        body = response.json()
        return body["data"] if isinstance(body, dict) and set(body) <= {"data", "meta"} and "data" in body else body

    def page_by_path(self, path: str) -> dict[str, Any] | None:
        node = self.get("/pages/1")
        if path == "/":
            return self.get(f"/pages/{node['id']}", includes="areas,custom_attributes")
        for depth in range(1, path.count("/") + 1):
            prefix = "/" + "/".join(path.strip("/").split("/")[:depth])
            children = self.get(f"/pages/{node['id']}/children")
            node = next((c for c in children if c.get("path") == prefix), None)
            if node is None:
                return None
        return self.get(f"/pages/{node['id']}", includes="areas,custom_attributes")

    def blocks(self, path: str, area: str) -> list[tuple[str, dict[str, Any]]]:
        page = self.page_by_path(path)
        assert page is not None, f"no page at {path}"
        areas = page.get("areas") or []
        areas = areas["data"] if isinstance(areas, dict) else areas
        for found in areas:
            if found["name"] == area:
                blocks = found["blocks"]["data"] if isinstance(found["blocks"], dict) else found["blocks"]
                return [(b["type"], b["value"] or {}) for b in blocks]
        return []

    def all(self, path: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        seen: set[Any] = set()
        after: Any = None
        while True:
            params: dict[str, Any] = {"limit": 100}
            if after is not None:
                params["after"] = after
            page = self.get(path, **params)
            fresh = [item for item in page if item["id"] not in seen]
            if not fresh:
                return items
            seen.update(item["id"] for item in fresh)
            items += fresh
            after = fresh[-1]["id"]

    def close(self) -> None:
        self.http.close()


@pytest.fixture
def example(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Site:
    for name, value in PASSWORDS.items():
        monkeypatch.setenv(name, value)
    root = tmp_path / "site"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".cmssync"))
    return Site(root, sandbox)


@pytest.fixture
def example_any_dialect(tmp_path: Path, sandbox_any_dialect: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Site:
    for name, value in PASSWORDS.items():
        monkeypatch.setenv(name, value)
    root = tmp_path / "site"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".cmssync"))
    return Site(root, sandbox_any_dialect)


@pytest.fixture
def raw(sandbox_server: Sandbox) -> Iterator[RawSite]:
    site = RawSite(sandbox_server)
    yield site
    site.close()
