"""``--sandbox``: the embedded emulator as the site a command talks to, and opening a content directory's workspace."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cmssync.logs import note

if TYPE_CHECKING:
    from cmssync.emulator.embedded import Sandbox
    from cmssync.sync.workspace import Workspace


@contextmanager
def site_overrides(directory: Path, sandbox: bool) -> Iterator[dict[str, Any] | None]:
    """Settings that point a command at the embedded sandbox (``--sandbox``), or None for the configured site.

    The sandbox keeps its database and its own state under ``DIR/.cmssync/sandbox/``, so consecutive commands
    (apply, then plan) see the same emulated site. The paths handed on are absolute: a relative one would be taken
    relative to the content directory again (``Settings.resolve``), which doubles a relative DIR.
    """
    if not sandbox:
        yield None
        return
    from cmssync.emulator.embedded import Sandbox

    home = directory.absolute() / ".cmssync" / "sandbox"
    home.mkdir(parents=True, exist_ok=True)
    with _start_sandbox(Sandbox, home) as emulated:
        note(f"sandbox: emulated Concrete CMS site at {emulated.url}", url=emulated.url)
        yield {
            "site": {"url": emulated.url, "api_prefix": "/ccm/api/1.0"},
            "auth": {
                "grant": "password",
                "client_id": emulated.client_id,
                "client_secret": emulated.client_secret,
                "username": emulated.admin_username,
                "password": emulated.admin_password,
                "token_store": str(home / "tokens.json"),
                "token_cache": False,  # a restarted sandbox may not know an old token: nothing to save anyway
            },
            "state": str(home / "state.json"),
        }


def _start_sandbox(sandbox_class: type[Sandbox], home: Path) -> Sandbox:
    """The sandbox on the port it had last time, so absolute links stored on the emulated site stay valid."""
    port_file = home / "port"
    try:
        sandbox = sandbox_class(db=str(home / "site.sqlite3"), port=int(port_file.read_text()))
    except (OSError, ValueError):  # no port yet, or it is taken now
        sandbox = sandbox_class(db=str(home / "site.sqlite3"))
    port_file.write_text(str(sandbox.port))
    return sandbox


def open_site_workspace(
    directory: Path, overrides: dict[str, Any] | None, *, lock_timeout: float | None = None, missing_ok: bool = False
) -> Workspace:
    from cmssync.sync.workspace import open_workspace

    return open_workspace(
        directory,
        overrides=overrides,
        any_site=overrides is not None,
        lock_timeout=lock_timeout,
        missing_ok=missing_ok,
    )
