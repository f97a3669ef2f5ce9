"""The commands that read a content directory or a plan file and never a site: ``validate``, ``show`` and
``force-unlock``. Registered on the group in :mod:`cmssync.cli`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from cmssync.cli.options import CONTENT_DIR, report_format, wants_color
from cmssync.errors import StateError


@click.command()
@CONTENT_DIR
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    help="text; json: one document on stdout; github: annotations (::error file=…,line=…::…) for GitHub Actions.",
)
@click.option(
    "--no-secrets",
    is_flag=True,
    help="Do not check users' passwords (for a job without the password variables).",
)
def validate(directory: Path, output_format: str, no_secrets: bool) -> int:
    """Check the content without the site: files, references, settings, passwords (set, the site's length),
    the local state. Exit 0 when valid, 1 with located problems."""
    from cmssync.commands.validate import run_validate

    return run_validate(
        directory,
        out=sys.stdout,
        output_format=output_format,  # type: ignore[arg-type]
        secrets=not no_secrets,
    )


@click.command("force-unlock")
@click.argument("lock_id")
@CONTENT_DIR
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def force_unlock(lock_id: str, directory: Path, yes: bool) -> int:
    """Release the state lock LOCK_ID left by a run that is gone (the lock error names the id).

    Refused for a lock held under another id or by a live process on this host (stop that process instead).
    """
    from cmssync.state.backends import force_unlock as release
    from cmssync.sync.workspace import open_state

    def confirm(holder: Any) -> bool:
        if yes:
            return True
        if not sys.stdin.isatty():
            raise StateError(f"the lock {lock_id} is held by {holder.describe()}; confirm with --yes to release it")
        return click.confirm(
            f"Release the lock of {holder.describe()}? Only if that run is gone: two runs would write one state",
            default=False,
        )

    click.echo(release(open_state(directory), lock_id, confirm=confirm))
    return 0


@click.command()
@click.argument("plan_file", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@report_format("text, the JSON report, markdown for a pull request, or the HTML report.")
@click.option(
    "--content",
    "content_dir",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="The content directory the plan was made from: the HTML report inlines its new images from there "
    "(default: from the bytes the plan file carries).",
)
def show(plan_file: Path, output_format: str, content_dir: Path | None) -> int:
    """Render a saved plan file (from plan -o) again; reads no site and needs no credentials."""
    from cmssync.commands.show import run_show

    return run_show(
        plan_file,
        out=sys.stdout,
        output_format=output_format,  # type: ignore[arg-type]
        content_dir=content_dir,
        color=wants_color() and output_format == "text",
    )
