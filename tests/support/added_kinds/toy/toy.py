"""A toy kind, one module and nothing else: ``toys.txt`` lists toys, one a line (a name, and optionally an email);
each is the site user ``toy_<name>``. It is validated (a name is lowercase letters and digits), planned with its
desired form (``Action.form``), applied from it (created, its email updated, deleted with pruning:
``delete_rank``), pulled (``pull --kind toy`` takes in the site's toy users), targeted, excluded, and its
file's changes scoped, as a built-in kind is."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import JsonValue

from cmssync.api.client import ConcreteClient
from cmssync.api.models import User
from cmssync.content.site import SiteContent
from cmssync.errors import Problem
from cmssync.plan.actions import Action, FieldChange, Precondition
from cmssync.plan.kinds import KindFacts
from cmssync.plan.scope_model import Scope
from cmssync.state.records import KindRecord, State
from cmssync.sync.engine import ApplyContext
from cmssync.sync.kinds import ManagedKind
from cmssync.sync.pull_writes import Staged
from cmssync.sync.pulling import PullRun

LIST = "toys.txt"
PREFIX = "toy_"
NAME = re.compile(r"[a-z0-9]+")
EMAIL = re.compile(r"[^@\s]+@[^@\s]+")


def _lines(directory: Path) -> list[list[str]]:
    listed = directory / LIST
    return [line.split() for line in listed.read_text().splitlines()] if listed.exists() else []


def default_email(username: str) -> str:
    return f"{username}@example.com"


def listed_toys(directory: Path) -> dict[str, str]:
    """The toys ``toys.txt`` lists: the site user's name → its email (a line's second word, else the default)."""
    toys = {}
    for words in _lines(directory):
        if words:
            username = PREFIX + words[0]
            toys[username] = words[1] if len(words) > 1 else default_email(username)
    return toys


def validate_toys(content: SiteContent) -> list[Problem]:
    problems = []
    for number, words in enumerate(_lines(content.root), start=1):
        if words and not NAME.fullmatch(words[0]):
            problems.append(Problem(LIST, number, 1, f"toy {words[0]!r}: a toy's name is lowercase letters and digits"))
        elif len(words) > 1 and not (len(words) == 2 and EMAIL.fullmatch(words[1])):
            column = len(words[0]) + 2
            problems.append(Problem(LIST, number, column, f"toy {words[0]!r}: after the name, one email address"))
    return problems


async def observe_toys(client: ConcreteClient, directory: Path, state: State) -> dict[str, User]:
    return {user.username: user async for user in client.iter_users() if user.username.startswith(PREFIX)}


def plan_toys(directory: Path, observed: dict[str, User], state: State) -> list[Action]:
    """A listed toy the site lacks is created, one whose email differs updated, each carrying its desired form (what
    apply writes); a recorded one no longer listed is deleted (the planner guards the deletes and keeps them without
    pruning)."""
    listed = listed_toys(directory)
    actions = []
    for name, email in sorted(listed.items()):
        live = observed.get(name)
        form: dict[str, JsonValue] = {"username": name, "email": email}
        if live is None:
            actions.append(Action(kind="toy", key=name, op="create", precondition=Precondition(absent=True), form=form))
        elif live.email != email:
            change = FieldChange(field="email", before=live.email, after=email)
            there = Precondition(remote_id=str(live.id))
            actions.append(Action(kind="toy", key=name, op="update", changes=(change,), precondition=there, form=form))
    actions += [
        Action(kind="toy", key=name, op="delete", precondition=Precondition(remote_id=str(record.id)))
        for name, record in sorted(state.records_of("toy").items())
        if name not in listed and name in observed and observed[name].id == record.id
    ]
    return actions


def stale_toy(action: Action, observed: dict[str, User], state: State) -> str | None:
    live = observed.get(action.key)
    if action.precondition.absent and live is not None:
        return f"exists on the site now (user id {live.id})"
    if not action.precondition.absent and (live is None or str(live.id) != action.precondition.remote_id):
        return f"is not the user the plan was made to {action.op}"
    return None


async def apply_toy(action: Action, context: ApplyContext) -> str:
    """Writes the toy the plan carries (``Action.form``): the content is not read."""
    if action.op == "delete":
        user_id = int(action.precondition.remote_id or 0)
        await context.client.delete_user(user_id)
        context.state.forget("toy", action.key)
        context.save()
        return f"deleted (id {user_id})"
    assert action.form is not None  # the registry refuses a create or update without it
    email = str(action.form["email"])
    if action.op == "update":
        user = await context.client.update_user(int(action.precondition.remote_id or 0), email=email)
    else:
        user = await context.client.create_user(username=action.key, email=email, password="pw-1234567")
    context.state.record("toy", action.key, KindRecord(id=user.id))
    context.save()
    return f"{action.op}d (id {user.id})"


async def pull_toys(run: PullRun) -> None:
    """``toys.txt`` gets the site's toys the file lists, and the others when taken in (``--kind toy``, ``--all``);
    the others are listed as not taken in."""
    if run.only:
        return
    await run.turn("toy")
    others = run.bound_by_others("toy")  # a user the user kind manages is not a toy
    site = {
        name: user
        for name, user in (await observe_toys(run.client, run.root, run.state)).items()
        if str(user.id) not in others
    }
    listed = list(listed_toys(run.root))
    others = sorted(set(site) - set(listed))
    if not run.scope.takes("toy"):
        run.result.not_taken.setdefault("toy", []).extend(others)
        others = []
    names = [name for name in listed if name in site] + others
    if not names:
        return
    target = run.root / LIST
    text = "".join(_line(name, site[name].email) for name in names)
    recorded = run.state.records_of("toy")

    def clean(file: Path) -> bool:
        """The file lists the toys the state records, as the site holds them (else a local edit, kept)."""
        toys = listed_toys(file.parent)
        return set(toys) == set(recorded) and all(name in site and site[name].email == toys[name] for name in toys)

    run.result.staged.append(Staged("toy", LIST, target, text=text, clean=clean))
    run.result.records["toy"] = {name: KindRecord(id=site[name].id) for name in names}


def _line(username: str, email: str | None) -> str:
    name = username.removeprefix(PREFIX)
    return f"{name}\n" if email in (None, default_email(username)) else f"{name} {email}\n"


def toy_scope(name: str) -> Scope | None:
    return Scope(kinds=frozenset({"toy:*"})) if name == LIST else None


TOY = KindFacts(
    "toy",
    "toys",
    binds="user",
    delete_rank=3,
    pull_rank=5,
    keys=lambda content: listed_toys(content.root),
    scope=toy_scope,
)
KIND = ManagedKind(
    TOY,
    apply=apply_toy,
    observe=observe_toys,
    plan=plan_toys,
    stale=stale_toy,
    pull=pull_toys,
    validate=validate_toys,
)
