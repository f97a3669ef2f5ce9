"""The options the commands share: content directory, site and plan options, durations, and the global flags that
work before or after a command's name (``--debug``, ``--log-format``, ``--config``, ``--no-color``, ``--quiet``)."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from cmssync.logs import configure_logging, configure_notes

if TYPE_CHECKING:
    from cmssync.plan.request import PlanRequest

F = TypeVar("F", bound=Callable[..., Any])

CONTENT_DIR = click.argument("directory", required=False, default=".", type=click.Path(file_okay=False, path_type=Path))


def _not_the_plan_file(ctx: click.Context, param: click.Parameter, directory: Path) -> Path:
    if directory.is_file():  # ``cmssync apply plan.json site``: the arguments swapped
        raise click.BadParameter(
            f"'{directory}' is a file, not a content directory: the order is `cmssync apply DIR PLANFILE`", ctx, param
        )
    return directory


APPLY_CONTENT_DIR = click.argument(
    "directory", required=False, default=".", type=click.Path(path_type=Path), callback=_not_the_plan_file
)
"""apply's content directory, first: a file there is a usage error that says the order of the arguments."""


def site_options(command: F) -> F:
    """Options shared by every command that talks to a site."""
    return click.option(
        "--sandbox",
        is_flag=True,
        help="Start the embedded emulator on a free loopback port, seeded with its default site, and target it.",
    )(command)


def plan_options(command: F) -> F:
    """The options of a plan, shared by ``plan`` and ``apply`` (see :func:`plan_request`)."""
    options = [
        click.option(
            "--target",
            "targets",
            multiple=True,
            metavar="KIND:KEY",
            help="Limit to these objects and what they need (repeatable), e.g. page:/about, 'page:/services/*', "
            "stack:footer-column-1, file:images/logo.png, 'file:*.pdf', user:jane.editor, 'group:Content Team' "
            "(* matches any characters, / included; ? one).",
        ),
        click.option(
            "--exclude",
            "excludes",
            multiple=True,
            metavar="KIND:KEY",
            help="Leave these objects out, and what needs them (repeatable; patterns as --target), e.g. "
            "'page:/services/*' or user:sam_writer",
        ),
        click.option(
            "--prune", is_flag=True, default=None, help="Delete managed objects that disappeared from the content."
        ),
        click.option("--replace-moved", is_flag=True, help="Apply page moves as create-new-then-delete-old."),
        click.option("--allow-mass-delete", is_flag=True, help="Allow deletes beyond the prune guards."),
        click.option(
            "--force",
            is_flag=True,
            help="Settle every conflict (changed in the content and on the site) for the content: overwrite editors.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def plan_request(
    targets: tuple[str, ...],
    prune: bool | None,
    replace_moved: bool,
    allow_mass_delete: bool,
    force: bool = False,
    excludes: tuple[str, ...] = (),
) -> PlanRequest:
    from cmssync.plan.request import PlanRequest

    return PlanRequest(
        targets=targets,
        excludes=excludes,
        prune=prune or None,
        replace_moved=replace_moved,
        allow_mass_delete=allow_mass_delete,
        force=force,
    )


class _Duration(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.2; runs on 8.1 too
    """Seconds, or ``500ms``, ``30s``, ``10m``, ``1h`` (the settings' durations)."""

    name = "DURATION"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        from cmssync.config import parse_duration

        try:
            return parse_duration(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def report_format(help: str) -> Callable[[F], F]:
    """``--format`` of the commands that render a plan: text, the JSON report, markdown or the HTML report."""
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(["text", "json", "markdown", "html"]),
        default="text",
        help=help,
    )


LOCK_TIMEOUT = click.option(
    "--lock-timeout",
    type=_Duration(),
    default=None,
    help="Wait up to this long (30s, 10m) for the state lock another run holds; default: the lock_timeout "
    "setting, 0: fail at once.",
)


def wants_color() -> bool:
    return sys.stdout.isatty() and colors_allowed()


def colors_allowed() -> bool:
    """Neither ``--no-color`` nor ``NO_COLOR``: what may be coloured on a terminal (the output, the spinner)."""
    return "NO_COLOR" not in os.environ and not _global("no_color")


def quiet() -> bool:
    """``--quiet``: no progress display, and only warnings and errors in the log."""
    return bool(_global("quiet"))


def _global(name: str) -> Any:
    ctx = click.get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    return obj.get(name) if isinstance(obj, dict) else None


@contextmanager
def flag_variables_restored() -> Iterator[None]:
    """Put back the environment variables that global flags set (``--config``, ``--env``, ``--site``).

    A flag reaches every part of the run through its variable; once the command returns, a caller that runs
    another command in the same process (the tests, an embedding program) starts without it.
    """
    from cmssync.config import CONFIG_VARIABLE, ENV_VARIABLE, SITE_VARIABLE

    names = (CONFIG_VARIABLE, ENV_VARIABLE, SITE_VARIABLE)
    saved = {name: os.environ.get(name) for name in names}
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _set_global(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    """Record a global flag given before or after the command (``cmssync --debug plan``, ``cmssync plan --debug``).

    The group's options are parsed first (their defaults included); a subcommand's copy changes the choice only
    when it was given, and logging is configured again to match.
    """
    if param.name is None or value in (None, False):
        return
    root = ctx.find_root()
    if not isinstance(root.obj, dict):
        root.obj = {}
    root.obj[param.name] = value
    if param.name == "config":
        from cmssync.config import CONFIG_VARIABLE

        os.environ[CONFIG_VARIABLE] = str(Path(value).absolute())
    if param.name == "env":
        from cmssync.config import ENV_VARIABLE

        os.environ[ENV_VARIABLE] = str(value)
    if param.name == "site":
        from cmssync.config import SITE_VARIABLE

        os.environ[SITE_VARIABLE] = str(value)
    configure_from_flags(root.obj)


def configure_from_flags(flags: dict[str, Any]) -> None:
    log_format = flags.get("log_format") or "auto"
    json_lines = None if log_format == "auto" else log_format == "json"
    level = logging.DEBUG if flags.get("debug") else logging.WARNING if flags.get("quiet") else logging.INFO
    configure_logging(level=level, json_lines=json_lines)
    # The lines for people (errors, warnings, progress, the sandbox's address) are JSON only when asked for: in
    # ``auto`` a CI log keeps its plain ``error: …`` lines beside the JSON of the loggers. ``cli.main`` sets them
    # from the raw arguments first (so a usage error is covered); a flag given changes them, none leaves them.
    if flags.get("log_format") or flags.get("quiet"):
        configure_notes(json_lines=log_format == "json", level=logging.WARNING if flags.get("quiet") else logging.INFO)


def global_options(command: F) -> F:
    """The options every command takes before or after its name: ``--debug``, ``--log-format``, ``--config``,
    ``--env``, ``--site``, ``--no-color``, ``--quiet``."""
    options = [
        click.option(
            "--debug", is_flag=True, expose_value=False, callback=_set_global, help="Show tracebacks and debug logs."
        ),
        click.option(
            "--log-format",
            type=click.Choice(["auto", "console", "json"]),
            default=None,
            expose_value=False,
            callback=_set_global,
            help="Log rendering: console on a terminal and JSON lines otherwise (auto, the default), or forced.",
        ),
        click.option(
            "--config",
            type=click.Path(dir_okay=False, exists=True, path_type=Path),
            expose_value=False,
            callback=_set_global,
            help="Read the settings from this file instead of DIR/cmssync.yaml (also CMSSYNC_CONFIG).",
        ),
        click.option(
            "--env",
            "env",
            metavar="NAME",
            default=None,
            expose_value=False,
            callback=_set_global,
            help="Apply the settings of this environment of cmssync.yaml's environments (also CMSSYNC_ENV).",
        ),
        click.option(
            "--site",
            "site",
            metavar="HANDLE",
            default=None,
            expose_value=False,
            callback=_set_global,
            help="Manage this site of a multi-site installation (site.handle; also CMSSYNC_SITE__HANDLE).",
        ),
        click.option(
            "--no-color", is_flag=True, expose_value=False, callback=_set_global, help="No colors (also NO_COLOR)."
        ),
        click.option(
            "--quiet",
            "-q",
            is_flag=True,
            expose_value=False,
            callback=_set_global,
            help="No progress display; only warnings and errors in the log.",
        ),
    ]
    # A function's decorators are applied bottom up; a built command's parameters are appended in order.
    for option in options if isinstance(command, click.Command) else reversed(options):
        command = option(command)
    return command


class Group(click.Group):
    """Every command gets the global options, so they work after the command's name too."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        global_options(cmd)
        super().add_command(cmd, name)
