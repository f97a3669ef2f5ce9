"""Users' passwords as the content names them (``password: ${env:NAME}``): set, and as long as the site accepts.

Checked by ``validate`` and by apply before its first write, so an unset variable or a two-character password is
found before the thirteen changes ahead of it are written, not by the site's refusal in the middle of the run.
A password is read from the environment only where it is set (:func:`env_password`): apply reads the variable a
plan's user action names (``UserForm.password``), so a saved plan needs the variable, not the content.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from cmssync.config.model import PasswordSettings
from cmssync.content.fields import Location
from cmssync.content.models import UserSpec
from cmssync.content.site import SiteContent
from cmssync.errors import ContentError, Problem
from cmssync.secrets import register_secret

PasswordSource = tuple[str, str, Location | None]
"""(username, the environment variable holding the password, where the content wrote the user)."""


def password_problems(
    content: SiteContent, environ: Mapping[str, str] | None = None, *, users: Iterable[str] | None = None
) -> list[Problem]:
    """A located problem for each user (of ``users``, default all) whose password variable is unset, or whose
    password is shorter or longer than ``passwords`` in the settings allow."""
    wanted = set(content.users) if users is None else set(users)
    sources = [
        (username, spec.password.name, spec.source)
        for username, spec in sorted(content.users.items())
        if spec.password is not None and username in wanted
    ]
    return problems_of(sources, content.settings.passwords, environ)


def problems_of(
    sources: Iterable[PasswordSource], rules: PasswordSettings, environ: Mapping[str, str] | None = None
) -> list[Problem]:
    """:func:`password_problems` of the passwords named by ``sources`` (what a plan's user actions carry)."""
    env = os.environ if environ is None else environ
    problems: list[Problem] = []
    for username, variable, source in sources:
        value = env.get(variable)
        if value is None:
            message = f"environment variable {variable} is not set"
        elif not rules.min_length <= len(value) <= rules.max_length:
            message = (
                f"the password in {variable} has {len(value)} characters; the site accepts "
                f"{rules.min_length} to {rules.max_length} (passwords.min_length, passwords.max_length)"
            )
        else:
            continue
        where = source or Location(file="users.yaml", line=0, column=0)
        problems.append(where.problem(f"user {username!r}: {message}"))
    return problems


def resolve_password(user: UserSpec, environ: Mapping[str, str] | None = None) -> str | None:
    """The user's password from the environment (``None`` when the content gives none).

    Not checked at validate time, so ``validate`` runs in CI without secrets; an unset variable is reported here,
    where the password is needed, as a located ``ContentError``.
    """
    variable = user.password.name if user.password is not None else None
    return env_password(user.username, variable, user.source, environ)


def env_password(
    username: str, variable: str | None, where: Location | None, environ: Mapping[str, str] | None = None
) -> str | None:
    """The password in the environment variable ``variable`` (None: the content names none), registered as a
    secret; an unset variable is a ``ContentError`` located at the user (``where``). Apply calls it with what the
    plan carries (``UserForm``), so a saved plan needs only the variable, not the content."""
    if variable is None:
        return None
    env = os.environ if environ is None else environ
    value = env.get(variable)
    if value is None:
        at = where or Location(file="users.yaml", line=0, column=0)
        problem = f"user {username!r}: environment variable {variable} is not set"
        raise ContentError([Problem(at.file, at.line, at.column, problem)])
    register_secret(value)  # masked by value wherever text leaves the process (cmssync.secrets)
    return value
