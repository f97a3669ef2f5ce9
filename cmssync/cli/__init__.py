"""The command line: parse options, call one application function, map errors to exit codes.

Nothing here knows how a command works; each command hands off to a function of a lower layer. ``main`` is the
single place where errors become exit codes (design.md §4): 0 success, 1 error, 2 ``plan --detailed-exitcode``
found changes, 130 interrupted. A failure prints one line (or one line per located content problem), never a
traceback unless ``--debug``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from cmssync import __version__
from cmssync.cli.local import force_unlock, show, validate
from cmssync.cli.options import (
    APPLY_CONTENT_DIR,
    CONTENT_DIR,
    LOCK_TIMEOUT,
    Group,
    colors_allowed,
    configure_from_flags,
    flag_variables_restored,
    global_options,
    plan_options,
    plan_request,
    quiet,
    report_format,
    site_options,
    wants_color,
)
from cmssync.cli.sandbox import open_site_workspace, site_overrides
from cmssync.cli.state import import_, probe_block_type, refresh, state
from cmssync.cli.tools import emulator, schema
from cmssync.errors import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    CmsSyncError,
    ContentError,
    condensed,
    printable,
)
from cmssync.logs import configure_notes, note, notes_as_json

__all__ = ["cli", "main", "site_overrides"]


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="cmssync")
@global_options
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Keep a Concrete CMS site in line with a directory of YAML and asset files.

    Shell completion: eval "$(_CMSSYNC_COMPLETE=bash_source cmssync)" (zsh_source, fish_source).
    """
    if not isinstance(ctx.obj, dict):
        ctx.obj = {}
    configure_from_flags(ctx.obj)


@cli.command()
@CONTENT_DIR
@click.option(
    "-o", "--out", "plan_file", type=click.Path(dir_okay=False, path_type=Path), help="Write the plan file (JSON)."
)
@report_format("What to print on stdout: text, the JSON report, markdown for a pull request, or the HTML report.")
@click.option("--detailed-exitcode", is_flag=True, help="Exit 2 when there are changes, 0 when none.")
@click.option("--compact", is_flag=True, help="Text: one line per object instead of every change.")
@click.option(
    "--step-summary",
    is_flag=True,
    help="Also append the markdown to $GITHUB_STEP_SUMMARY (the job summary in GitHub Actions).",
)
@plan_options
@site_options
def plan(
    directory: Path,
    plan_file: Path | None,
    output_format: str,
    detailed_exitcode: bool,
    compact: bool,
    step_summary: bool,
    sandbox: bool,
    **options: Any,
) -> int:
    """Read the site and print what apply would do; writes nothing to the site."""
    from cmssync.commands.plan import run_plan

    with site_overrides(directory, sandbox) as overrides:
        workspace = open_site_workspace(directory, overrides)
        return asyncio.run(
            run_plan(
                workspace,
                plan_request(**options),
                out=sys.stdout,
                output_format=output_format,  # type: ignore[arg-type]
                plan_file=plan_file,
                detailed_exitcode=detailed_exitcode,
                color=wants_color() and output_format == "text",
                compact=compact,
                step_summary=step_summary,
                notes=sys.stderr,
                progress=not quiet(),
                progress_color=colors_allowed(),
            )
        )


@cli.command()
@APPLY_CONTENT_DIR
@click.argument("plan_file", required=False, type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    help="json: NDJSON events on stdout (the plan, each outcome, a summary), for CI.",
)
@click.option(
    "--compact/--full",
    default=None,
    help="Show the plan one line per object, or in full, before asking (default: compact above 50 actions).",
)
@plan_options
@LOCK_TIMEOUT
@site_options
def apply(
    directory: Path,
    plan_file: Path | None,
    yes: bool,
    output_format: str,
    compact: bool | None,
    sandbox: bool,
    lock_timeout: float | None,
    **options: Any,
) -> int:
    """Make the site match the content (with PLAN_FILE: exactly that plan, refused if stale; DIR may be absent)."""
    from cmssync.commands.apply import run_apply
    from cmssync.sync.applying import ApplyRequest

    request = ApplyRequest(plan=plan_request(**options), plan_file=plan_file)
    interactive = sys.stdin.isatty() and sys.stdout.isatty()

    def ask() -> bool:
        return click.confirm("Apply these changes?", default=False)

    with sigterm_interrupts(), site_overrides(directory, sandbox) as overrides:
        # A saved plan carries what it writes: its content directory may be gone (CI applies the artifact).
        workspace = open_site_workspace(
            directory, overrides, lock_timeout=lock_timeout, missing_ok=plan_file is not None
        )
        return asyncio.run(
            run_apply(
                workspace,
                request,
                out=sys.stdout,
                yes=yes,
                ask=ask if interactive else None,
                color=wants_color() and output_format == "text",
                output_format=output_format,  # type: ignore[arg-type]
                compact=compact,
                notes=sys.stderr,
                progress=not quiet(),
                progress_color=colors_allowed(),
            )
        )


@cli.command()
@CONTENT_DIR
@click.option("--pages", multiple=True, metavar="PATH", help="Only these page paths (and their blocks).")
@click.option("--force", is_flag=True, help="Overwrite files edited locally since the last pull (else kept, exit 1).")
@click.option("--dry-run", is_flag=True, help="Show what would change as a diff per file; write nothing.")
@click.option("--all", "take_all", is_flag=True, help="Also take in what the content does not manage yet.")
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    metavar="KIND",
    help="Also take in the site's objects of this kind the content does not manage yet (page, stack, file, user, "
    "group, or any other kind this installation manages).",
)
@click.option(
    "--commit",
    is_flag=True,
    help="Write nothing here: commit what pull would write to a branch (--branch) that is not checked out.",
)
@click.option("--branch", metavar="NAME", help="With --commit: the branch (default cmssync/site-changes).")
@click.option("--push", metavar="REMOTE", help="With --commit: push the branch to this git remote.")
@click.option("--message", metavar="TEXT", help="With --commit: the commit's subject line.")
@LOCK_TIMEOUT
@site_options
def pull(
    directory: Path,
    pages: tuple[str, ...],
    force: bool,
    dry_run: bool,
    take_all: bool,
    kinds: tuple[str, ...],
    commit: bool,
    branch: str | None,
    push: str | None,
    message: str | None,
    sandbox: bool,
    lock_timeout: float | None,
) -> int:
    """Merge the live site into the content directory and record it as managed.

    In a directory that already manages content, only what it manages is pulled (the rest is listed) unless --all,
    --kind or --pages. A file edited since the last pull is kept as it is and listed (exit 1) unless --force.

    With --commit the checked-out branch, its files, the index and the state stay as they are: what pull would
    write becomes one commit on --branch (created from HEAD if missing), for review as a pull request.
    """
    from cmssync.commands.pull import CommitOptions, PullOptions, run_pull

    if not commit and (branch or push or message):
        raise click.UsageError("--branch, --push and --message go with --commit")
    if commit and dry_run:
        raise click.UsageError("--commit and --dry-run exclude each other (--dry-run shows the diff of a pull)")
    if not dry_run and not commit:
        directory.mkdir(parents=True, exist_ok=True)
    with site_overrides(directory, sandbox) as overrides:
        options: PullOptions = {
            "pages": pages,
            "overrides": overrides,
            "lock_timeout": lock_timeout,
            "force": force,
            "take_all": take_all,
            "kinds": kinds,
            "dry_run": dry_run,
        }
        target = CommitOptions(push=push, message=message, **({"branch": branch} if branch else {})) if commit else None
        return asyncio.run(
            run_pull(
                directory,
                out=sys.stdout,
                notes=sys.stderr,
                progress=not quiet(),
                progress_color=colors_allowed(),
                commit=target,
                **options,
            )
        )


@cli.command()
@CONTENT_DIR
@click.option(
    "--watch",
    type=click.Choice(["inotify", "poll", "off"]),
    default=None,
    help="How to notice file changes (default from daemon.watch in cmssync.yaml).",
)
@click.option(
    "--mode",
    type=click.Choice(["enforce", "report"]),
    default=None,
    help="enforce: apply the content; report: observe, report and notify, never write (default from daemon.mode).",
)
@LOCK_TIMEOUT
@site_options
def daemon(directory: Path, watch: str | None, mode: str | None, sandbox: bool, lock_timeout: float | None) -> int:
    """Watch the content, re-check on a schedule and serve health and metrics, until SIGTERM."""
    from cmssync.daemon.main import run_daemon

    if lock_timeout is not None:  # every run reads the settings again: the lock_timeout setting carries it
        os.environ["CMSSYNC_LOCK_TIMEOUT"] = repr(lock_timeout)

    with site_overrides(directory, sandbox) as overrides:
        return run_daemon(directory, overrides=overrides, watch=watch, mode=mode)


@cli.command()
@CONTENT_DIR
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text")
@click.option("--detailed-exitcode", is_flag=True, help="Exit 2 when the site differs from the content, 0 when not.")
@site_options
def status(directory: Path, output_format: str, detailed_exitcode: bool, sandbox: bool) -> int:
    """Connectivity, account, site, system info, granted scopes, and a drift summary."""
    from cmssync.commands.status import run_status

    with site_overrides(directory, sandbox) as overrides:
        return asyncio.run(
            run_status(
                directory,
                out=sys.stdout,
                overrides=overrides,
                output_format=output_format,  # type: ignore[arg-type]
                detailed_exitcode=detailed_exitcode,
            )
        )


cli.add_command(validate)
cli.add_command(force_unlock)
cli.add_command(show)
cli.add_command(schema)
cli.add_command(emulator)
cli.add_command(state)
cli.add_command(import_)
cli.add_command(refresh)
cli.add_command(probe_block_type)


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """While inside, SIGTERM interrupts like Ctrl-C: ``main`` says "interrupted" and exits 130 (docs/ci.md).

    For the part of ``apply`` before its actions start (loading the content, reading the site, planning), where
    nothing has been written: without it a SIGTERM there would end the process with the default 143 and no word.
    Once the actions start, :mod:`cmssync.commands.apply` takes SIGTERM over (finish the actions in flight, start no
    more). Only in the main thread, where Python allows a signal handler; elsewhere nothing changes.
    """

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def skip_unused_async_backends() -> None:
    """Keep trio from being imported: the command line runs on asyncio only, but httpcore imports trio, when it is
    installed, just to learn whether it runs under it — ~40 ms of every command on such a machine (issue 17).

    ``sys.modules["trio"] = None`` makes ``import trio`` fail as if it were not installed, which httpcore handles.
    Only for a real command line (``python -m cmssync``, the ``cmssync`` script): never inside a process that
    imported trio already or that calls :func:`main` with arguments (tests).
    """
    sys.modules.setdefault("trio", None)  # type: ignore[arg-type]


def early_notes(args: list[str]) -> None:
    """Set how :func:`cmssync.logs.note` writes from the raw arguments, before click parses them."""
    json_lines = any(
        arg == "--log-format=json" or (arg == "--log-format" and args[i + 1 : i + 2] == ["json"])
        for i, arg in enumerate(args)
    )
    quiet_flag = any(arg in ("-q", "--quiet") for arg in args)
    configure_notes(json_lines=json_lines, level=logging.WARNING if quiet_flag else logging.INFO)


def main(argv: list[str] | None = None) -> int:
    """Console entry point: the one handler that maps errors to exit codes."""
    if argv is None:
        skip_unused_async_backends()
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    # Before parsing: a usage error (an unknown flag before --log-format) is then a JSON line too.
    early_notes(args)
    try:
        with flag_variables_restored():
            result = cli.main(args=argv, prog_name="cmssync", standalone_mode=False)
    except CmsSyncError as exc:
        if debug:
            raise
        *details, last = printable(str(exc)).splitlines() or [""]
        if isinstance(exc, ContentError):  # located problems, a few per message, then the summary
            details = [printable(line) for line in condensed(exc.problems)]
        for line in details:
            note(line, level=logging.ERROR)
        note(f"error: {last}", level=logging.ERROR)
        return exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        note("interrupted", level=logging.ERROR)
        return EXIT_INTERRUPTED
    except click.ClickException as exc:
        if notes_as_json():
            note(f"error: {exc.format_message()}", level=logging.ERROR, usage=True)
        else:
            exc.show()
        # A usage error (a typo in a flag) is an error: exit 1, never 2, which means "changes" under
        # --detailed-exitcode.
        return EXIT_ERROR
    except OSError as exc:
        if debug:
            raise
        note(f"error: {printable(str(exc))}", level=logging.ERROR)
        return EXIT_ERROR
    return result if isinstance(result, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
