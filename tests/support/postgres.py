"""A throwaway PostgreSQL cluster for the tests, and its pytest fixtures (a plugin, as tests.support.sandbox).

* ``postgres_cluster`` (session): one cluster made with ``initdb`` in a temporary directory and started with
  ``pg_ctl`` on a free loopback port, password authentication over TCP (the password reaches libpq through
  ``PGPASSWORD``, as a user's would); stopped and removed at the end of the session. As root, the server runs as
  the ``postgres`` system user (PostgreSQL refuses to run as root). Skipped, saying why, when the binaries are
  missing (``.ci/run`` installs Debian's ``postgresql``) or no unprivileged user exists.
* ``postgres_state``: a state URL of its own for one test (``postgresql://…#test-<random>``): tests share the
  cluster and the database, each under its own state name, as sites share a database.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

USER = "cmssync"
DATABASE = "cmssync"


def postgres_bindir() -> Path | None:
    """Where ``initdb`` and ``pg_ctl`` are: ``PG_BINDIR``, PATH, or Debian's /usr/lib/postgresql/N/bin (newest)."""
    named = os.environ.get("PG_BINDIR")
    if named and (Path(named) / "initdb").is_file():
        return Path(named)
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[4]))
    return Path(versions[-1]).parent if versions else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresCluster:
    """One running cluster; :attr:`url` is the database's URL without the password (``PGPASSWORD`` holds it)."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.port = _free_port()
        self.password = secrets.token_hex(12)
        self.root = Path(tempfile.mkdtemp(prefix="cmssync-pg-"))
        self.data = self.root / "data"
        self.url = f"postgresql://{USER}@127.0.0.1:{self.port}/{DATABASE}"
        self._runas: list[str] = []
        if os.geteuid() == 0:
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                shutil.rmtree(self.root)
                pytest.skip("running as root and no `postgres` user to run a PostgreSQL server as")
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
            self._runas = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> None:
        done = subprocess.run(
            [*self._runas, *args], capture_output=True, text=True, timeout=120, check=False, cwd=self.root
        )
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:2])} failed ({done.returncode}): {done.stdout}{done.stderr}")

    def start(self) -> None:
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        if self._runas:
            shutil.chown(pwfile, "postgres")
        self._run(
            str(self.bindir / "initdb"), "-D", str(self.data), "-U", USER, "--pwfile", str(pwfile),
            "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C",
        )  # fmt: skip
        pwfile.unlink()
        options = f"-h 127.0.0.1 -p {self.port} -k {self.root} -F -c max_connections=60 -c shared_buffers=16MB"
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"), "-o", options,
                  "-w", "-t", "60", "start")  # fmt: skip
        import psycopg

        admin = f"postgresql://{USER}@127.0.0.1:{self.port}/postgres"
        with psycopg.connect(admin, password=self.password, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def environment(self) -> dict[str, str]:
        """What a process needs besides the URL to reach the database: the password, as libpq reads it."""
        return {"PGPASSWORD": self.password}

    def state_url(self, name: str | None = None) -> str:
        return f"{self.url}#{name or 'test-' + secrets.token_hex(6)}"


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[dev]')")
    bindir = postgres_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (no initdb: apt-get install postgresql; .ci/run does)")
    cluster = PostgresCluster(bindir)
    try:
        cluster.start()
    except Exception:
        cluster.stop()
        raise
    saved = os.environ.get("PGPASSWORD")
    os.environ["PGPASSWORD"] = cluster.password
    try:
        yield cluster
    finally:
        if saved is None:
            os.environ.pop("PGPASSWORD", None)
        else:
            os.environ["PGPASSWORD"] = saved
        cluster.stop()


@pytest.fixture
def postgres_state(postgres_cluster: PostgresCluster) -> str:
    return postgres_cluster.state_url()
