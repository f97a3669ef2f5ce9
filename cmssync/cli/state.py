"""Operating the state: ``cmssync state list|show|rm|mv``, ``cmssync import KIND:KEY SITE_ID``, ``cmssync
refresh`` (the refresh-only run) and ``cmssync probe-block-type HANDLE``. The work is :mod:`cmssync.sync.state_ops`
and :mod:`cmssync.sync.block_type_probe`; registered on the group in :mod:`cmssync.cli`."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import click

from cmssync.cli.options import CONTENT_DIR, LOCK_TIMEOUT, site_options
from cmssync.cli.sandbox import site_overrides
from cmssync.errors import EXIT_ERROR, EXIT_OK
from cmssync.plan.actions import OUTPUT_FORMAT_VERSION


def _store(directory: Path, lock_timeout: float | None) -> Any:
    from cmssync.sync.workspace import open_state

    return open_state(directory, lock_timeout=lock_timeout)


@click.group()
def state() -> None:
    """List, show, forget (rm) and rebind (mv) what the state manages; the site is never touched."""


@state.command("list")
@CONTENT_DIR
@click.option("--kind", help="Only this kind: page, stack, file, user, group, or a registered kind.")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text")
def list_records(directory: Path, kind: str | None, output_format: str) -> int:
    """Every object the state manages, as KIND:KEY with its site id."""
    from cmssync.sync.state_ops import addresses

    current = _store(directory, None).load()
    rows = [(str(address), getattr(record, "id", None)) for address, record in addresses(current, kind)]
    if output_format == "json":
        objects = [{"address": address, "id": site_id} for address, site_id in rows]
        click.echo(json.dumps({"format_version": OUTPUT_FORMAT_VERSION, "objects": objects}, indent=1))
    else:
        for address, site_id in rows:
            click.echo(f"{address}\t{site_id}")
    return 0


@state.command()
@click.argument("address")
@CONTENT_DIR
def show(address: str, directory: Path) -> int:
    """One record of the state as JSON (ids, digests, versions, the conflict base)."""
    from cmssync.sync.state_ops import describe, parse_address, record_of

    target = parse_address(address)
    record = describe(record_of(_store(directory, None).load(), target))
    document = {"format_version": OUTPUT_FORMAT_VERSION, "address": str(target), "record": record}
    click.echo(json.dumps(document, indent=1))
    return 0


@state.command()
@click.argument("address")
@CONTENT_DIR
@LOCK_TIMEOUT
def rm(address: str, directory: Path, lock_timeout: float | None) -> int:
    """Forget an object: it stays on the site, unmanaged (never deleted, even by apply --prune)."""
    from cmssync.sync.state_ops import parse_address, remove

    click.echo(remove(_store(directory, lock_timeout), parse_address(address)))
    return 0


@state.command()
@click.argument("source")
@click.argument("target")
@CONTENT_DIR
@LOCK_TIMEOUT
def mv(source: str, target: str, directory: Path, lock_timeout: float | None) -> int:
    """Bind the site object of SOURCE to TARGET (same kind), e.g. after renaming a page's file."""
    from cmssync.sync.state_ops import move, parse_address

    click.echo(move(_store(directory, lock_timeout), parse_address(source), parse_address(target)))
    return 0


@click.command("import")
@click.argument("address")
@click.argument("site_id")
@CONTENT_DIR
@LOCK_TIMEOUT
@site_options
def import_(address: str, site_id: str, directory: Path, lock_timeout: float | None, sandbox: bool) -> int:
    """Bind the existing site object SITE_ID to ADDRESS (page:/about, user:jane, group:Editors), whose content must
    exist; the next plan shows only where the two really differ."""
    from cmssync.sync.state_ops import import_object, parse_address
    from cmssync.sync.workspace import open_workspace

    with site_overrides(directory, sandbox) as overrides:
        workspace = open_workspace(directory, overrides=overrides, lock_timeout=lock_timeout, any_site=sandbox)
        click.echo(asyncio.run(import_object(workspace, parse_address(address), site_id)))
    return 0


@click.command()
@CONTENT_DIR
@LOCK_TIMEOUT
@site_options
def refresh(directory: Path, lock_timeout: float | None, sandbox: bool) -> int:
    """Refresh-only run: record every managed page's current live version on the site as its base and forget
    objects the site no longer has; nothing is written to the site."""
    from cmssync.sync.state_ops import refresh as refresh_state
    from cmssync.sync.workspace import open_workspace

    with site_overrides(directory, sandbox) as overrides:
        workspace = open_workspace(directory, overrides=overrides, lock_timeout=lock_timeout, any_site=sandbox)
        done = asyncio.run(refresh_state(workspace))
    for line in done.rebased:
        click.echo(f"rebased {line}")
    for line in done.gone:
        click.echo(f"forgot {line}: no longer on the site")
    click.echo(
        f"refreshed: {len(done.rebased)} rebased, {len(done.gone)} gone, {done.unchanged} unchanged; "
        "nothing written to the site",
        file=sys.stdout,
    )
    return 0


@click.command("probe-block-type")
@click.argument("handle")
@click.option("--block", "block_id", type=int, metavar="ID", help="Probe this block (else the first the site shows).")
@CONTENT_DIR
@LOCK_TIMEOUT
@site_options
def probe_block_type(
    handle: str, block_id: int | None, directory: Path, lock_timeout: float | None, sandbox: bool
) -> int:
    """Check whether blocks of HANDLE, a type a theme or package adds, round-trip through the site's API (one
    copied to the scratch page, written back, changed; the block itself is never written) and record the verdict in
    the state: pull then writes them as content, or keeps them. Exit 0 symmetric, 1 not (or no verdict)."""
    from cmssync.sync.block_type_probe import probe_block_type as probe
    from cmssync.sync.workspace import open_workspace

    with site_overrides(directory, sandbox) as overrides:
        workspace = open_workspace(directory, overrides=overrides, lock_timeout=lock_timeout, any_site=sandbox)
        probed = asyncio.run(probe(workspace, handle, block_id=block_id))
    verdict = probed.verdict
    for step in probed.steps:
        click.echo(f"  {step}")
    fields = ", ".join(f"{name} ({kind})" for name, kind in verdict.fields.items()) or "none"
    if verdict.symmetric:
        click.echo(
            f"{handle}: round-trips (block {verdict.block_id}, {probed.where}; fields: {fields}); recorded in the "
            f"state: pull writes {handle} blocks as content (raw: true)"
        )
        return EXIT_OK
    click.echo(
        f"{handle}: does not round-trip (block {verdict.block_id}, {probed.where}): {verdict.reason}; recorded in "
        f"the state: pull keeps {handle} blocks as placeholders"
    )
    return EXIT_ERROR
