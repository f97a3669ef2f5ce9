"""The built-in kinds' pure facts (groups, files, pages, stacks, users), each with its pure planner: the kind
modules of ``cmssync.sync.kinds`` bring them with their I/O, and :data:`BUILT_IN_KINDS` is the table of them alone
(what the pure functions plan with when a run's table is not given: tests, tools).

A stack is planned and recorded as its page (``/!stacks/<handle>``): the page planner plans it, and its records are
the page kind's, which names them ``stack:<handle>`` (``cmssync.content.paths.page_object_id``). The pages need
the files' URLs and ids (``KindInputs.planned["file"]``), so files are planned first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from cmssync.content.paths import STACKS_PREFIX, asset_path_of, page_object_id, page_path_of
from cmssync.plan import groups
from cmssync.plan.actions import Action
from cmssync.plan.drift import Settling
from cmssync.plan.files import FilePlan, file_deletes, plan_files
from cmssync.plan.kinds import KindFacts, KindInputs, KindPlan, KindTable
from cmssync.plan.pages import PageContext, page_deletes, plan_pages
from cmssync.plan.scope_model import Scope
from cmssync.plan.users import plan_users, user_deletes


def _asset_plan(settling: Settling, actions: list[Action], deletes: Callable[[], list[Action]]) -> KindPlan:
    """A user's or file kind's plan: its actions and deletes, and what its settling collected."""
    return KindPlan(
        actions, deletes, settling.conflicts, settling.held, site_changes=settling.site_changes, rebase=settling.rebase
    )


def _plan_files(given: KindInputs) -> KindPlan:
    settling = Settling(given.options.conflicts, given.options.drift, given.warnings)
    files = plan_files(given.content, given.observed, given.state, given.warnings, settling)
    return replace(
        _asset_plan(settling, files.actions, lambda: file_deletes(given.content, given.observed, given.state)),
        shared=files,
    )


def _plan_pages(given: KindInputs) -> KindPlan:
    earlier = given.planned.get(FILE.name)
    files = earlier.shared if earlier is not None and isinstance(earlier.shared, FilePlan) else FilePlan()
    context = PageContext(
        given.content, given.observed, given.state, given.options, files.urls, files.ids, frozenset(files.changing)
    )
    pages = plan_pages(context, given.warnings)
    return replace(pages, deletes=lambda: page_deletes(context, pages.moved_from, given.warnings))


def _plan_users(given: KindInputs) -> KindPlan:
    options, content, observed, state = given.options, given.content, given.observed, given.state
    settling = Settling(options.conflicts, options.drift, given.warnings)
    users = plan_users(
        content, observed, state, options.passwords_changed, options.passwords_unset, given.warnings, settling
    )
    protect = options.protect_users | ({options.api_username} if options.api_username else set())
    return _asset_plan(settling, users, lambda: user_deletes(content, observed, state, protect, given.warnings))


def _under(*tops: str) -> Callable[[str], bool]:
    return lambda name: name.split("/", 1)[0] in tops


def _page_scope(name: str) -> Scope | None:
    return Scope(pages=frozenset({page_path_of(name)})) if _under("pages")(name) else None


def _stack_scope(name: str) -> Scope | None:
    return Scope(pages=frozenset({page_path_of(name)})) if _under("stacks")(name) else None


def _file_scope(name: str) -> Scope | None:
    return Scope(files=frozenset({asset_path_of(name)})) if _under("files")(name) and name != "files" else None


def _user_scope(name: str) -> Scope | None:
    return Scope(all_users=True) if _under("users", "users.yaml")(name) else None


FILE = KindFacts("file", "files", delete_rank=1, pull_rank=2, scope=_file_scope, plan_rank=1, plan=_plan_files)
PAGE = KindFacts(
    "page", "pages", page_object_id, delete_rank=0, pull_rank=0, scope=_page_scope, plan_rank=2, plan=_plan_pages
)
STACK = KindFacts(
    "stack", "stacks", pull_rank=1, scope=_stack_scope, recorded_as=lambda handle: STACKS_PREFIX + handle, plan_rank=3
)
USER = KindFacts("user", "users", delete_rank=2, pull_rank=3, scope=_user_scope, plan_rank=4, plan=_plan_users)

BUILT_IN: tuple[KindFacts, ...] = (groups.FACTS, FILE, PAGE, STACK, USER)
"""The built-in kinds in plan order (groups, files, pages, stacks, users)."""


BUILT_IN_KINDS = KindTable(BUILT_IN)
"""The built-in kinds alone (what a run manages when no other kind module is installed)."""


def display_order(kinds: Iterable[str], *, pulled: bool = False) -> list[str]:
    """Kinds as a plan (or, ``pulled``, a pull) shows them: the built-in kinds in plan (pull) order, then the others
    as first named."""
    named = list(dict.fromkeys(kinds))
    ranked = sorted(BUILT_IN, key=lambda kind: kind.pull_rank or 0) if pulled else BUILT_IN
    built_in = [kind.name for kind in ranked]
    return [name for name in built_in if name in named] + [name for name in named if name not in built_in]
