"""The opt-in real-site suite: skipped unless ``CMSSYNC_REALSITE_ENV`` names the env file of a running site.

A real Concrete CMS 9.3.1 site (``atomik_full``) is stood up by ``shared/realsite/up.sh``, which writes an env file
(``/tmp/concrete-site.env``). Every scenario starts from a fresh site, so ``CMSSYNC_REALSITE_RESET`` must name the
script that restores it (``shared/realsite/reset.sh``)::

    CMSSYNC_REALSITE_ENV=/tmp/concrete-site.env CMSSYNC_REALSITE_RESET=/work/shared/realsite/reset.sh \\
        python3 -m pytest -p no:cacheprovider tests/realsite -v

Without them every test here is skipped at collection (CI never has a real site). Optional: the site's request log
(``CONCRETE_REQUEST_LOG`` in the env file) gives each command's request count; ``CONCRETE_DB`` (a ``mysql …``
command line) gives the numeric file ids an editor's links store, which the REST API does not show.
``CMSSYNC_REALSITE_REPORT=FILE`` also writes the measurements as JSON lines.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.realsite.harness import (
    PublicSite,
    RawApi,
    Report,
    SiteAccess,
    read_env_file,
    reset_environment,
    stack_ids,
    write_settings,
)

HERE = Path(__file__).resolve().parent


def _unavailable() -> str | None:
    env_file = os.environ.get("CMSSYNC_REALSITE_ENV")
    if not env_file:
        return "real-site suite: set CMSSYNC_REALSITE_ENV to the env file of a running site (shared/realsite/up.sh)"
    if not Path(env_file).is_file():
        return f"real-site suite: CMSSYNC_REALSITE_ENV={env_file} does not exist"
    reset = os.environ.get("CMSSYNC_REALSITE_RESET")
    if not reset or not Path(reset).is_file():
        return "real-site suite: set CMSSYNC_REALSITE_RESET to the site's reset script (shared/realsite/reset.sh)"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = _unavailable()
    if reason is None:
        return
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.skip(reason=reason))


REPORT = Report()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not REPORT.lines:
        return
    terminalreporter.section("real-site measurements")
    for line in REPORT.lines:
        terminalreporter.write_line(line)
    target = os.environ.get("CMSSYNC_REALSITE_REPORT")
    if target:
        with Path(target).open("a", encoding="utf-8") as stream:
            for record in REPORT.records:
                stream.write(json.dumps(record) + "\n")


@pytest.fixture
def report() -> Report:
    return REPORT


@pytest.fixture(scope="session")
def realsite_env() -> dict[str, str]:
    return read_env_file(Path(os.environ["CMSSYNC_REALSITE_ENV"]))


def _numeric_ids(env: dict[str, str]) -> dict[str, int]:
    command = env.get("CONCRETE_DB")
    if not command:
        raise AssertionError("the env file has no CONCRETE_DB: numeric file ids cannot be read")
    done = subprocess.run(
        [*shlex.split(command), "-N", "-B", "-e", "SELECT fUUID, fID FROM Files WHERE fUUID IS NOT NULL"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    ids: dict[str, int] = {}
    for line in done.stdout.splitlines():
        uuid, _, number = line.partition("\t")
        if uuid and number.strip().isdigit():
            ids[uuid.strip().lower()] = int(number)
    return ids


def _request_counter(env: dict[str, str]) -> object:
    log = env.get("CONCRETE_REQUEST_LOG")
    if not log:
        return None

    def count() -> int:
        try:
            with Path(log).open("rb") as stream:
                return sum(1 for _ in stream)
        except OSError:
            return 0

    return count


@pytest.fixture
def real_site(realsite_env: dict[str, str]) -> SiteAccess:
    """The real site, reset to its fresh state (``atomik_full``, ``elemental_full`` …)."""
    reset = os.environ["CMSSYNC_REALSITE_RESET"]
    subprocess.run([reset], check=True, capture_output=True, timeout=300, env=reset_environment(realsite_env))
    env = realsite_env
    return SiteAccess(
        base_url=env.get("CMSSYNC_URL") or env["CONCRETE_BASE"],
        client_id=env["CMSSYNC_CLIENT_ID"],
        client_secret=env["CMSSYNC_CLIENT_SECRET"],
        username=env.get("CMSSYNC_USERNAME", "admin"),
        password=env["CMSSYNC_PASSWORD"],
        numeric_file_ids=lambda: _numeric_ids(env),
        request_count=_request_counter(env),  # type: ignore[arg-type]
    )


@pytest.fixture
def api(real_site: SiteAccess) -> Iterator[RawApi]:
    with contextlib.closing(RawApi(real_site)) as client:
        yield client


@pytest.fixture
def stacks(real_site: SiteAccess, realsite_env: dict[str, str]) -> dict[str, int]:
    """The fresh site's stacks, handle → page id."""
    return stack_ids(realsite_env)


@pytest.fixture
def public(real_site: SiteAccess) -> Iterator[PublicSite]:
    with contextlib.closing(PublicSite(real_site.base_url)) as site:
        yield site


@pytest.fixture
def content_dir(tmp_path: Path, real_site: SiteAccess) -> Path:
    directory = tmp_path / "site"
    write_settings(directory, real_site)
    return directory
