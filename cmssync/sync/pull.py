"""``cmssync pull``: adopt an existing site, or merge the site's changes into content that already manages it.

Every kind's pull hook (``ManagedKind.pull``, run by ``cmssync.sync.pulling``) reads the site's objects of its
kind and stages their files: groups, files (downloaded), pages (the page tree, ``cmssync.sync.pull_pages``), stacks,
users, then any kind added in ``cmssync.sync.kinds``. What is written is the content that, applied, gives the site
as it is, so the next plan is empty.

**Pull merges.** An existing file is the starting point: what the site holds as the file says (compared as the
planner compares) keeps the file's own text — ``${env:…}`` passwords, ``raw: true`` blocks, references, comments,
key order, quoting — and only what differs takes the site's value (``cmssync.sync.pull_merge``); a YAML file
holding the same data is not rewritten at all. In a directory that already manages content, only what it manages
is pulled; the site's other objects are listed and taken in only with ``--all``, ``--kind`` or ``--pages``; site
files are bound by identity, never by name or list order (``cmssync.sync.pull_scope``). So a pull right after an
apply writes nothing (no content, manifest or state) and exits 0.

Everything written is recorded as managed in the state, keeping what pull does not read (password digests, a draft
cmssync started).

Not pulled, because the API cannot write it back: passwords (users get none; add ``password: ${env:NAME}`` to set
one), select and file attributes (the API sets them by numeric option or file id), the super admin (user 1).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.config import CONFIG_VARIABLE, Settings, load_settings
from cmssync.errors import ConfigError
from cmssync.state.backends import StateBackend, holding_lock, open_state_backend
from cmssync.state.records import State
from cmssync.sync.kinds import Registry, discover
from cmssync.sync.pull_config import GITIGNORE, LOCAL_ONLY, starter_config
from cmssync.sync.pull_record import record_pulled
from cmssync.sync.pull_scope import PullScope, pull_scope
from cmssync.sync.pull_writes import Pulled, Staged, discard_staging, settle, staging_directory
from cmssync.sync.pulling import PullRun, run_pulls


async def pull_site(
    directory: Path,
    *,
    pages: tuple[str, ...] = (),
    overrides: Mapping[str, Any] | None = None,
    lock_timeout: float | None = None,
    force: bool = False,
    dry_run: bool = False,
    take_all: bool = False,
    kinds: tuple[str, ...] = (),
    into: Path | None = None,
) -> Pulled:
    """Pull under the state lock and return what was (with ``dry_run``: would be) written; the command renders it
    (``cmssync.render.pull``). With ``into`` (``pull --commit``: the content directory in a checkout of the
    proposal branch) the files are merged into and written there, from the settings and the state of
    ``directory``, and the state is neither locked nor written."""
    settings = load_settings(directory, overrides=overrides)
    if not settings.site.url:
        raise ConfigError(f"no site to pull from: set site.url in {directory / 'cmssync.yaml'} or CMSSYNC_URL")
    store = open_state_backend(settings, directory, lock_timeout=lock_timeout)
    record = into is None
    registry = discover()
    unknown = [kind for kind in kinds if kind not in registry.table.pulled]
    if unknown:
        raise ConfigError(
            f"pull --kind {unknown[0]}: not a kind pull takes in (one of {', '.join(registry.table.pulled)})"
        )
    # A dry run writes nothing, not even a lock file or a first state.json: the lock's release saves the state.
    async with holding_lock(store, "cmssync pull") if record and not dry_run else contextlib.nullcontext():
        state = store.load()
        site = settings.site
        assert site.url is not None  # checked above
        state.bind_site(site.url, site.api_prefix, allow_other_site=overrides is not None, handle=site.handle)
        root = into or directory
        async with ConcreteClient.from_settings(settings, base_dir=directory) as client:
            only_site = settings.site.handle is not None
            scope = pull_scope(root, state, registry.table, take_all=take_all, kinds=kinds, site_only=only_site)
            return await pull(
                client,
                root,
                settings,
                state,
                store,
                only=pages,
                force=force,
                dry_run=dry_run,
                scope=scope,
                record=record,
                kinds=registry,
            )


async def pull(
    client: ConcreteClient,
    root: Path,
    settings: Settings,
    state: State,
    store: StateBackend,
    *,
    only: tuple[str, ...] = (),
    force: bool = False,
    dry_run: bool = False,
    scope: PullScope | None = None,
    record: bool = True,
    kinds: Registry | None = None,
) -> Pulled:
    """Read the site, stage every file, then write those that lose no local edit (``cmssync.sync.pull_writes``)
    and record what was written; with ``dry_run`` keep the diffs and write nothing, state included; without
    ``record`` write the files but leave the state as it is (``pull --commit``: the files go to a branch, not into
    the content the state describes)."""
    result = Pulled(
        root=root,
        dry_run=dry_run,
        site_url=client.base_url,
        staging=staging_directory(root, dry_run=dry_run),
        values=settings.values,
    )
    kinds = kinds or discover()
    scope = scope or pull_scope(root, state, kinds.table, site_only=settings.site.handle is not None)
    try:
        run = PullRun(client, root, settings, state, result, scope, only, kinds.table)
        await run_pulls(run, [(kind.name, kind.pull) for kind in kinds.pulled() if kind.pull is not None])
        if client.site_handle is not None:
            result.notes.append(
                f"site {client.site_handle}: its pages are this directory's; stacks, files, users and groups belong "
                "to the whole installation (every site shows them) and are pulled with the default site's content "
                "(--kind KIND takes them here; docs/content-format.md › Several sites)"
            )
        if not (root / "cmssync.yaml").exists() and CONFIG_VARIABLE not in os.environ:
            text = starter_config(settings, result.unnamed_folders)
            result.staged.append(Staged("config", "cmssync.yaml", root / "cmssync.yaml", text=text))
            _keep_local_files_out_of_git(root, result)
        result.settled = settle(result.staged, root, force=force, dry_run=dry_run)
    finally:
        discard_staging(result.staging)
    if dry_run or not record:
        return result
    before = state.model_dump()
    record_pulled(root, state, client.base_url, result, kinds.table.names)
    if state.model_dump() != before:
        store.save(state)
    return result


def _keep_local_files_out_of_git(root: Path, result: Pulled) -> None:
    """With the starter ``cmssync.yaml`` (a directory pulled for the first time), a ``.gitignore`` excluding what
    cmssync keeps on this machine only (:data:`LOCAL_ONLY`); when the directory has one that does not exclude it, a
    note instead (the user's file is never rewritten)."""
    ignore = root / ".gitignore"
    if not ignore.exists():
        result.staged.append(Staged("ignore", ".gitignore", ignore, text=GITIGNORE))
        return
    try:
        lines = {line.strip().rstrip("/") for line in ignore.read_text(encoding="utf-8").splitlines()}
    except (OSError, UnicodeDecodeError):
        return
    if not {LOCAL_ONLY.rstrip("/"), "/" + LOCAL_ONLY.rstrip("/")} & lines:
        result.notes.append(
            f"{ignore.name} does not exclude {LOCAL_ONLY}: add it, so that the state, its lock and journal, tokens "
            'and pull\'s hashes are never committed (docs/state.md, "What to commit")'
        )
