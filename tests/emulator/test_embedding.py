"""The embedding API, persistence, seeds, ``--generate`` and the foreground server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from cmssync.emulator import generator
from cmssync.emulator.embedded import Sandbox
from cmssync.emulator.runtime import Emulator
from cmssync.emulator.settings import Settings
from tests.emulator.helpers import client, http_request, token

REPO = Path(__file__).resolve().parents[2]


def test_sandbox_stops_cleanly() -> None:
    before = {t.name for t in threading.enumerate()}
    sandbox = Sandbox(seed="empty")
    assert sandbox.url.startswith("http://127.0.0.1:")
    assert sandbox.api_url == sandbox.url + "/ccm/api/1.0"
    assert (sandbox.client_id, sandbox.client_secret) == ("sandbox", "sandbox-secret")
    assert (sandbox.admin_username, sandbox.admin_password) == ("admin", "sandbox-admin")
    started = time.perf_counter()
    sandbox.stop()
    sandbox.stop()  # idempotent
    assert time.perf_counter() - started < 2
    assert {t.name for t in threading.enumerate()} == before


def test_custom_credentials() -> None:
    with Sandbox(seed="empty", client_id="other", client_secret="s3cret", admin_password="pw-12345") as sandbox:
        assert token(sandbox)
        assert (
            http_request(
                "POST",
                sandbox.token_url,
                data={"grant_type": "client_credentials", "client_id": "sandbox", "client_secret": "sandbox-secret"},
            ).status_code
            == 400
        )


def test_database_survives_a_restart(tmp_path: Path) -> None:
    db = str(tmp_path / "site.sqlite3")
    with Sandbox(db=db) as first:
        bearer = token(first)
        with client(first, bearer) as api:
            created = api.post("/pages", json={"parent": 1, "name": "Kept", "type": "page", "template": "full"})
            page_id = created.json()["data"]["id"]
    with Sandbox(db=db, seed="empty") as second, client(second, bearer) as api:
        # Same database: the seed is not applied again, the page and even the token are still there.
        assert api.get(f"/pages/{page_id}").json()["data"]["name"] == "Kept"


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_seed_files(tmp_path: Path, suffix: str) -> None:
    seed = {
        "site": {"name": "Seeded"},
        "folders": [{"id": 1, "name": "Root"}, {"id": 2, "name": "pics", "parent": 1}],
        "groups": [{"id": 9, "name": "Writers"}],
        "users": [{"username": "sam", "email": "sam@example.com", "password": "sam-pass", "groups": [9]}],
        "pages": [
            {"path": "/", "name": "Start"},
            {
                "path": "/docs",
                "name": "Docs",
                "id": 40,
                "areas": {"Main": [{"type": "html", "value": {"content": "x"}}]},
            },
            {"path": "/docs/api", "name": "API", "template": "left_sidebar"},
        ],
        "files": [{"filename": "a.txt", "folder": 2, "text": "hello"}],
        "clients": [{"client_id": "extra", "secret": "extra-secret", "scopes": ["pages:read"]}],
    }
    path = tmp_path / f"seed{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(seed), encoding="utf-8")
    else:
        from ruamel.yaml import YAML

        with path.open("w", encoding="utf-8") as out:
            YAML(typ="safe", pure=True).dump(seed, out)
    with Sandbox(seed=str(path)) as sandbox, client(sandbox, token(sandbox)) as api:
        assert api.get("/sites/default").json()["data"]["name"] == "Seeded"
        assert api.get("/pages/40/children").json()["data"][0]["path"] == "/docs/api"
        assert api.get("/users/2").json()["data"]["groups"]["data"] == [{"id": 9, "name": "Writers"}]
        assert api.get("/files").json()["data"][0]["folder"] == 2
        assert token(sandbox, username="sam", password="sam-pass")
        extra = http_request(
            "POST",
            sandbox.token_url,
            data={
                "grant_type": "client_credentials",
                "client_id": "extra",
                "client_secret": "extra-secret",
                "scope": "pages:read",
            },
        )
        assert extra.status_code == 200


@pytest.mark.parametrize(
    "seed",
    [
        {"pages": [{"path": "/a", "name": "A"}]},
        {"pages": [{"path": "/", "name": "H"}, {"path": "/x/y", "name": "Y"}]},
        {"pages": [{"path": "/", "name": "H", "type": "nope"}]},
    ],
)
def test_bad_seed_files_are_refused(tmp_path: Path, seed: dict[str, object]) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(seed), encoding="utf-8")
    with pytest.raises(ValueError, match="seed"):
        Emulator(Settings(seed=str(path)))


@pytest.mark.parametrize("spec", ["pages=x", "lots=3", "pages"])
def test_bad_generate_specs(spec: str) -> None:
    with pytest.raises(ValueError, match="generate"):
        generator.parse_generate(spec)


def test_generate_builds_a_large_site_quickly() -> None:
    started = time.perf_counter()
    emu = Emulator(Settings(generate="pages=10000,blocks=5,files=50,users=20"))
    elapsed = time.perf_counter() - started
    try:
        assert emu.store.one("SELECT COUNT(*) AS n FROM pages")["n"] == 10007
        assert emu.store.one("SELECT COUNT(*) AS n FROM placements")["n"] >= 50000
        assert emu.store.one("SELECT COUNT(*) AS n FROM files")["n"] == 54
    finally:
        emu.close()
    assert elapsed < 60


def test_generated_pages_are_served() -> None:
    with Sandbox(seed="empty", generate="pages=150,blocks=2") as sandbox, client(sandbox, token(sandbox)) as api:
        sections = api.get("/pages/1/children").json()["data"]
        assert [p["path"] for p in sections] == ["/section-1", "/section-2"]
        page = api.get("/pages/3", params={"includes": "areas"}).json()["data"]
        assert len(page["areas"]["data"][0]["blocks"]["data"]) == 2


FOREGROUND = (
    "import sys\n"
    "from cmssync.emulator.server import run_emulator\n"
    "from cmssync.emulator.settings import Settings\n"
    "try:\n"
    "    settings = Settings(seed='empty', dialect='documented', client_id='c', client_secret='s',\n"
    "                        admin_password='pw-12345')\n"
    "    run_emulator(settings, host='127.0.0.1', port=0)\n"
    "except KeyboardInterrupt:\n"
    "    sys.exit(130)\n"
)
"""``cmssync emulator`` in the foreground, as a process of its own (exit 130 on Ctrl-C)."""


@contextmanager
def _foreground() -> Iterator[tuple[subprocess.Popen[str], str]]:
    """The emulator in the foreground and the line it printed first (its address); killed if still running."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen([sys.executable, "-c", FOREGROUND], stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stderr is not None
        yield process, process.stderr.readline()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


def test_ctrl_c_right_after_the_address_is_printed_exits_130() -> None:
    """On a busy machine the server is still starting when the address line is read: a Ctrl-C then was taken by
    asyncio's runner and the process exited 0 (issue 36); now it stops the server and exits 130 whenever it comes."""
    for _ in range(3):
        with _foreground() as (process, line):
            assert line.startswith("cmssync emulator listening on")
            process.send_signal(signal.SIGINT)  # at once: the server may not be running yet
            assert process.wait(timeout=15) == 130


def test_run_emulator_in_the_foreground() -> None:
    with _foreground() as (process, line):
        assert line.startswith("cmssync emulator listening on http://127.0.0.1:")
        assert "(dialect documented, seed empty)" in line
        url = line.split()[4]
        response = http_request(
            "POST",
            url + "/oauth/2.0/token",
            data={"grant_type": "client_credentials", "client_id": "c", "client_secret": "s"},
        )
        assert response.status_code == 200
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=15) == 130


def test_restart_applies_changed_credentials(tmp_path: Path) -> None:
    db = str(tmp_path / "site.sqlite3")
    with Sandbox(db=db, seed="empty"):
        pass
    with Sandbox(db=db, client_secret="rotated-secret", admin_password="new-admin-pw") as sandbox:
        assert token(sandbox)  # the new secret and password are the ones that work now


def test_reset_keeps_seed_and_dialect_but_not_generated_pages(sandbox: Sandbox) -> None:
    sandbox.reset(seed="empty", dialect="documented", generate="pages=5")
    sandbox.reset()
    assert sandbox.dialect == "documented"
    with client(sandbox, token(sandbox)) as api:
        assert api.get("/pages/1/children").json() == []
