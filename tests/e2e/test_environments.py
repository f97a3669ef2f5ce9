"""Environments (issue 35): one repository applied to two sites, staging and production, each with its own
connection, policy, values (``${value:banner}``) and state, chosen with ``--env`` (``CMSSYNC_ENV``); ``plan --env
production`` after staging was applied shows what promoting staging's content would do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from cmssync.cli import cli
from cmssync.config import ENV_VARIABLE, load_settings
from cmssync.emulator.embedded import Sandbox
from cmssync.errors import ConfigError, ContentError
from cmssync.plan.request import PlanRequest
from cmssync.render.text import render_text
from cmssync.sync.applying import ApplyRequest, apply_site
from cmssync.sync.planning import make_plan
from cmssync.sync.workspace import open_workspace
from tests.support.tokens import sandbox_token

HOME = """name: Home
areas:
  Main:
    - type: content
      value:
        content: <p>${value:banner}</p>
"""
ABOUT = """name: About
type: page
template: full
areas:
  Main:
    - type: content
      value:
        content: <p>About us</p>
"""


@pytest.fixture
def production() -> Iterator[Sandbox]:
    with Sandbox() as server:
        server.reset(seed="empty")
        yield server


@pytest.fixture
def repository(tmp_path: Path, sandbox_server: Sandbox, production: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Path:
    sandbox_server.reset(seed="empty")
    root = tmp_path / "site"
    (root / "pages").mkdir(parents=True)
    (root / "pages" / "index.yaml").write_text(HOME, encoding="utf-8")
    (root / "pages" / "about.yaml").write_text(ABOUT, encoding="utf-8")
    (root / "cmssync.yaml").write_text(
        "auth:\n  grant: password\n  username: admin\n"
        "values:\n  banner: Welcome\n"
        "environments:\n"
        f"  staging:\n    site: {{url: '{sandbox_server.url}'}}\n    values: {{banner: 'Staging build'}}\n"
        f"  production:\n    site: {{url: '{production.url}'}}\n    publish: draft\n",
        encoding="utf-8",
    )
    for name, value in {
        "CMSSYNC_CLIENT_ID": sandbox_server.client_id,
        "CMSSYNC_CLIENT_SECRET": sandbox_server.client_secret,
        "CMSSYNC_PASSWORD": sandbox_server.admin_password,
    }.items():
        monkeypatch.setenv(name, value)
    return root


def _home_text(sandbox: Sandbox, *, recent: bool = False) -> str:
    with httpx.Client(base_url=sandbox.api_url, timeout=30) as http:
        http.headers["authorization"] = "Bearer " + sandbox_token(sandbox, "pages:read")
        params = {"includes": "areas", **({"version": "recent"} if recent else {})}
        page = http.get("/pages/1", params=params).json()["data"]
    return str(page["areas"]["data"][0]["blocks"]["data"][0]["value"]["content"])


async def _apply(root: Path) -> None:
    report = await apply_site(open_workspace(root), ApplyRequest(PlanRequest()))
    assert report.exit_code == 0, report.problems


async def test_one_repository_two_sites_each_with_its_overrides_and_state(
    repository: Path, sandbox_server: Sandbox, production: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VARIABLE, "staging")
    await _apply(repository)
    assert "Staging build" in _home_text(sandbox_server)
    assert (repository / ".cmssync" / "staging" / "state.json").is_file()
    assert not (await make_plan(open_workspace(repository))).plan.actions

    # promoting staging's content: what production would get, with production's values and policy
    monkeypatch.setenv(ENV_VARIABLE, "production")
    promotion = (await make_plan(open_workspace(repository))).plan
    assert promotion.site == production.url
    assert promotion.publish == "draft"
    assert [(a.kind, a.key, a.op) for a in promotion.actions] == [("page", "/", "update"), ("page", "/about", "create")]
    text = render_text(promotion)
    assert "environment=production" in text
    assert "Welcome" in text
    assert "Staging build" not in text
    await _apply(repository)
    assert (repository / ".cmssync" / "production" / "state.json").is_file()
    assert "Welcome" in _home_text(production, recent=True)  # a draft there (publish: draft)
    assert "Staging build" in _home_text(sandbox_server)  # staging untouched
    assert not (await make_plan(open_workspace(repository))).plan.actions


def test_the_env_option_chooses_the_environment(
    repository: Path, production: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_VARIABLE, "")  # --env sets it in this process: unset again after the test
    result = CliRunner().invoke(cli, ["plan", "--env", "production", str(repository)])
    assert f"cmssync plan for {production.url} (publish: draft)" in result.output
    assert "environment=production" in result.output
    assert "Plan: 1 to create, 1 to update, 0 to delete." in result.output


def test_an_unknown_environment_and_a_bad_overlay_are_said(repository: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VARIABLE, "qa")
    with pytest.raises(ConfigError, match=r"no environment 'qa'.*environments: production, staging"):
        load_settings(repository)
    monkeypatch.delenv(ENV_VARIABLE)
    config = repository / "cmssync.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "    publsh: draft\n", encoding="utf-8")
    with pytest.raises(ContentError) as caught:
        load_settings(repository)
    assert "environments.production.publsh: unknown setting 'publsh' (did you mean 'publish'?)" in str(caught.value)


def test_a_value_the_settings_do_not_hold_is_a_located_error(repository: Path) -> None:
    (repository / "pages" / "about.yaml").write_text(ABOUT.replace("About us", "${value:missing}"), encoding="utf-8")
    with pytest.raises(ContentError) as caught:
        open_workspace(repository)
    problems = [str(p) for p in caught.value.problems]
    assert any(p.startswith("pages/about.yaml:8:18:") and "no value 'missing'" in p for p in problems), problems
