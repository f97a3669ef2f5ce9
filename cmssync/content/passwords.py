"""Users' passwords as the content names them (``password: ${env:NAME}``): set, and as long as the site accepts.

Checked by ``validate`` and by apply before its first write, so an unset variable or a two-character password is
found before the thirteen changes ahead of it are written, not by the site's refusal in the middle of the run.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from cmssync.content.fields import Location
from cmssync.content.site import SiteContent
from cmssync.errors import Problem


def password_problems(
    content: SiteContent, environ: Mapping[str, str] | None = None, *, users: Iterable[str] | None = None
) -> list[Problem]:
    """A located problem for each user (of ``users``, default all) whose password variable is unset, or whose
    password is shorter or longer than ``passwords`` in the settings allow."""
    env = os.environ if environ is None else environ
    rules = content.settings.passwords
    wanted = set(content.users) if users is None else set(users)
    problems: list[Problem] = []
    for username, spec in sorted(content.users.items()):
        if spec.password is None or username not in wanted:
            continue
        value = env.get(spec.password.name)
        if value is None:
            message = f"environment variable {spec.password.name} is not set"
        elif not rules.min_length <= len(value) <= rules.max_length:
            message = (
                f"the password in {spec.password.name} has {len(value)} characters; the site accepts "
                f"{rules.min_length} to {rules.max_length} (passwords.min_length, passwords.max_length)"
            )
        else:
            continue
        where = spec.source or Location(file="users.yaml", line=0, column=0)
        problems.append(where.problem(f"user {username!r}: {message}"))
    return problems
