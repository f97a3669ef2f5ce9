"""The starter ``cmssync.yaml`` that ``cmssync pull`` writes into a directory that has none, and its ``.gitignore``.

It names the site the pull read (``site.url`` in effect: the file, ``CMSSYNC_URL`` or ``--sandbox``), signs in with
the same grant, and takes every credential from the environment through ``${env:CMSSYNC_…}`` references — never a
value, so the file can be committed; an unset variable leaves its setting out, so ``cmssync validate`` and
``plan`` in CI need only the secrets they use. The ``folders:`` map is the one in effect plus, as comments, the
folder ids pull saw but cannot name (the API shows folders by id only): the user fills in their paths and pulls
again. Every section carries a comment saying what it is for; other settings keep their defaults (see the
settings reference).

No file is written when one is named by ``CMSSYNC_CONFIG`` (``--config FILE``): the settings live elsewhere.

The ``.gitignore`` (:data:`GITIGNORE`, written where there is none) excludes ``.cmssync/``: the local state with its
lock, journal and password key, the token store and pull's hashes of what it wrote are this machine's; committed,
every apply dirtied them and the password key travelled with the content.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping

from cmssync.config import DEFAULT_API_PREFIX, Settings
from cmssync.content.lists import PAGE_AND_FILE_DIRS, list_kinds
from cmssync.content.paths import CONFIG_FILE

CREDENTIALS = {
    "password": ("client_id", "client_secret", "username", "password"),
    "client_credentials": ("client_id", "client_secret"),
    "refresh_token": ("client_id", "client_secret", "refresh_token"),
    "token": ("token",),
}
"""The ``auth`` settings each grant needs; each is written as ``${env:CMSSYNC_<NAME>}``."""


LOCAL_ONLY = ".cmssync/"
"""What a content directory holds that is this machine's alone (the default state, tokens, pull's hashes)."""
_COMMITTED = ", ".join(
    [CONFIG_FILE, *(f"{name}/" for name in PAGE_AND_FILE_DIRS), *(kind.file for kind in list_kinds())]
)
GITIGNORE = f"""{
    textwrap.fill(
        f"Written by `cmssync pull`. Commit the content: {_COMMITTED}. Never commit what cmssync keeps on this "
        "machine: the state (with its lock, journal and password key), tokens and pull's hashes. Keep a shared "
        'state elsewhere: docs/state.md, "What to commit".',
        width=110,
        initial_indent="# ",
        subsequent_indent="# ",
        break_on_hyphens=False,
    )
}
{LOCAL_ONLY}
"""


def starter_config(settings: Settings, unnamed_folders: Mapping[int, int]) -> str:
    """The text of a starter ``cmssync.yaml`` for ``settings`` (see the module docstring)."""
    lines = [
        "# cmssync settings, written by `cmssync pull` because this directory had none.",
        "# Secrets are never written here: ${env:NAME} is replaced by that environment variable when the file is",
        "# read (a setting whose variable is unset is left out). Check it with `cmssync validate`.",
        "",
        "# The Concrete CMS site this directory describes, and the path of its REST API.",
        "site:",
        f"  url: {_scalar(settings.site.url or '')}",
    ]
    if settings.site.api_prefix != DEFAULT_API_PREFIX:
        lines.append(f"  api_prefix: {_scalar(settings.site.api_prefix)}")
    if settings.site.handle is not None:
        lines += [
            "  # the site of the multi-site installation this directory describes",
            f"  handle: {settings.site.handle}",
        ]
    grant = settings.auth.grant
    lines += [
        "",
        "# How cmssync signs in (OAuth2, Dashboard > System > API); the values come from the environment.",
        "auth:",
        f"  grant: {grant}",
        *(f"  {name}: ${{env:CMSSYNC_{name.upper()}}}" for name in CREDENTIALS.get(grant, ())),
        "",
        "# File-manager folder path -> this site's folder id. Sidecars name folders by path; the API shows only ids,",
        "# so files in folders not mapped here are pulled without a folder (their folder is left alone).",
    ]
    if settings.folders:
        lines.append("folders:")
        lines += [f"  {_scalar(path)}: {folder_id}" for path, folder_id in sorted(settings.folders.items())]
    else:
        lines.append("folders: {}")
    if unnamed_folders:
        lines.append("# Folders pull saw but cannot name: write their paths (/ is the root) and pull again.")
        lines += [
            f"#  /PATH-OF-FOLDER-{folder_id}: {folder_id}    # {count} file{'s' if count > 1 else ''}"
            for folder_id, count in sorted(unnamed_folders.items())
        ]
    lines += [
        "",
        "# Managed objects removed from this directory are deleted from the site only when pruning is on",
        "# (or with --prune for one run); mass deletes are refused beyond the guard's limits.",
        "prune:",
        "  enabled: false",
        "",
    ]
    return "\n".join(lines)


def _scalar(text: str) -> str:
    """A YAML scalar for ``text``: plain when that reads back the same, else double-quoted (JSON is valid YAML)."""
    plain = text and not any(ch in text for ch in ":#{}[],&*!|>'\"%@`") and text.strip() == text
    return text if plain else json.dumps(text)
