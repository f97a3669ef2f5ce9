"""Operating the state by hand (docs/state.md, "Operating the state"): list and show its records, forget one (the
object stays on the site, unmanaged), move one to another key, bind an existing site object to a key (``import``),
and record the site's current versions as the base without writing to the site (``refresh``).

Objects are named ``KIND:KEY`` — ``page:/about``, ``stack:footer``, ``file:images/logo.png``, ``user:jane``,
``group:Editors``, or a registered kind's name (``team:Team A``); a stack is named as plans name it, though its
record is its page's (``/!stacks/footer``). Every change holds the state's lock (waiting ``lock_timeout``) and is saved
through the backend's journal like an apply's, so a killed ``state rm`` leaves either the old or the new record.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from cmssync.api.client import ConcreteClient
from cmssync.api.errors import PendingDeletion
from cmssync.api.models import Page
from cmssync.content.paths import is_stack_path, object_page_path, page_object, page_object_id
from cmssync.errors import ApiError, ConfigError, StateError
from cmssync.plan.builtin_kinds import display_order
from cmssync.plan.conflicts import site_base
from cmssync.plan.desired import Resolver
from cmssync.plan.page_form import page_form, render_desired
from cmssync.state.backends import StateBackend, holding_lock, waiting_lock
from cmssync.state.records import PageBase, PageRecord, State
from cmssync.sync.kinds import ManagedKind, Registry
from cmssync.sync.page_read import PAGE_INCLUDES, to_live_page
from cmssync.sync.stack_displays import PageDisplays
from cmssync.sync.workspace import Workspace

log = logging.getLogger(__name__)

BUILT_IN: Final = ("page", "file", "user")
"""The kinds with a State map of their own, listed first (every other kind's records are in ``State.kinds``)."""


@dataclass(frozen=True)
class Address:
    """One object of the state: ``kind:key``."""

    kind: str
    key: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.key}"


def parse_address(text: str) -> Address:
    """``KIND:KEY`` as an Address; ConfigError naming the form when it is not one."""
    kind, colon, key = text.partition(":")
    if not colon or not kind or not key:
        raise ConfigError(
            f"{text!r} is not KIND:KEY (page:/about, file:images/logo.png, user:jane, group:Editors, or a registered "
            "kind such as team:Team A)"
        )
    return Address(kind.strip().lower(), key.strip() if kind != "page" else _page_key(key.strip()))


def _page_key(key: str) -> str:
    return "/" + key.strip("/") if key.strip("/") else "/"


def _stored(address: Address) -> Address:
    """Where the state keeps ``address``'s record: a stack's is its page's (``stack:footer`` is kept as
    ``page:/!stacks/footer``)."""
    path = object_page_path(address.kind, address.key)
    return Address("page", path) if path is not None else address


def _named(address: Address) -> Address:
    """How plans and output name the record at ``address`` (the inverse of :func:`_stored`)."""
    return Address(*page_object(address.key)) if address.kind == "page" else address


def records_of(state: State, kind: str) -> Mapping[str, Any]:
    return state.records_of(kind)


def addresses(state: State, kind: str | None = None) -> Iterator[tuple[Address, Any]]:
    """Every record of the state (of ``kind`` only, when given) with its address, kinds in order, keys sorted."""
    kinds = [*BUILT_IN, *sorted(state.kinds)]
    for name in kinds if kind is None else [_stored(Address(kind, "")).kind]:
        named = [(_named(Address(name, key)), record) for key, record in records_of(state, name).items()]
        for address, record in sorted(named, key=lambda pair: str(pair[0])):
            if kind is None or address.kind == kind:
                yield address, record


def record_of(state: State, address: Address) -> Any:
    """The record at ``address``; StateError naming the nearest addresses when there is none."""
    stored = _stored(address)
    record = records_of(state, stored.kind).get(stored.key)
    if record is None:
        raise StateError(f"the state has no {address}{_nearest(state, address)}")
    return record


def _nearest(state: State, address: Address) -> str:
    import difflib

    known = [str(a) for a, _ in addresses(state)]
    close = difflib.get_close_matches(str(address), known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else " (`cmssync state list` lists what it has)"


def _put(state: State, named: Address, record: Any) -> None:
    address = _stored(named)
    if address.kind == "page":
        state.record_page(address.key, record)
    elif address.kind == "file":
        state.record_file(address.key, record)
    elif address.kind == "user":
        state.record_user(address.key, record)
    else:
        state.record(address.kind, address.key, record)


def _forget(state: State, named: Address) -> None:
    address = _stored(named)
    if address.kind == "page":
        state.forget_page(address.key)
    elif address.kind == "file":
        state.forget_file(address.key)
    elif address.kind == "user":
        state.forget_user(address.key)
    else:
        state.forget(address.kind, address.key)


def remove(store: StateBackend, address: Address) -> str:
    """Forget ``address``; the object stays on the site, unmanaged."""
    with waiting_lock(store, "cmssync state rm"):
        state = store.load()
        record = record_of(state, address)
        _forget(state, address)
        store.save(state)
    return f"forgot {address} (id {getattr(record, 'id', '?')}): it stays on the site, no longer managed"


def move(store: StateBackend, source: Address, target: Address) -> str:
    """Bind the record at ``source`` to ``target`` instead (same kind; ``target`` must be free)."""
    if source.kind != target.kind:
        raise ConfigError(f"cannot move {source} to {target}: a record keeps its kind")
    with waiting_lock(store, "cmssync state mv"):
        state = store.load()
        record = record_of(state, source)
        if _stored(target).key in records_of(state, _stored(target).kind):
            raise StateError(f"the state already has {target}; `cmssync state rm {target}` first")
        _forget(state, source)
        _put(state, target, record)
        store.save(state)
    return f"moved {source} to {target}"


async def import_object(workspace: Workspace, address: Address, site_id: str) -> str:
    """Bind the site object ``site_id`` to ``address`` (whose content must exist): the next plan compares the two
    and shows only their real differences. Refused when the address or the object is bound already."""
    importable = ["page", *(kind.name for kind in _binders(workspace.kinds))]
    if address.kind not in importable:
        raise ConfigError(
            f"import binds {', '.join(importable)}; a {address.kind} is bound by its content ({_adoption(address)})"
        )
    if address.key not in _content_keys(workspace, address.kind):
        raise ConfigError(f"the content has no {address}: write its file first (or `cmssync pull --pages` it)")
    try:
        number = int(site_id)
    except ValueError:
        raise ConfigError(f"{address.kind} ids are numbers, not {site_id!r}") from None
    store = workspace.store
    async with holding_lock(store, "cmssync import"):
        state = workspace.load_state()
        if address.key in records_of(state, address.kind):
            raise StateError(f"the state already has {address}; `cmssync state rm {address}` first")
        for other, record in addresses(state, address.kind):
            if getattr(record, "id", None) == number:
                raise StateError(f"{address.kind} {number} is already bound to {other}; `cmssync state mv` it instead")
        async with workspace.client() as client:
            record, seen = await _site_record(
                client, workspace.kinds, address.kind, number, _SiteBase(workspace, state, client)
            )
        _put(state, address, record)
        store.save(state)
    return f"imported {address} = {address.kind} {number} on the site ({seen})"


def _adoption(address: Address) -> str:
    return "apply adopts a file whose bytes are already on the site" if address.kind == "file" else "its kind's rules"


def _content_keys(workspace: Workspace, kind: str) -> Mapping[str, Any]:
    content = workspace.content
    return content.pages if kind == "page" else content.of(kind)


def _binders(kinds: Registry) -> list[ManagedKind]:
    """The kinds bound by a site id (:attr:`ManagedKind.bind`) besides the pages, in pull order."""
    order = display_order(kinds.names, pulled=True)
    return sorted((kind for kind in kinds if kind.bind is not None), key=lambda kind: order.index(kind.name))


async def _site_record(
    client: ConcreteClient, kinds: Registry, kind: str, number: int, bases: _SiteBase
) -> tuple[Any, str]:
    """The record binding the site object, read from the site; ConfigError when there is no such object."""
    try:
        if kind == "page":
            page = await client.get_page(number, includes=PAGE_INCLUDES)
            live = page.version.id if page.version is not None else None
            record = await bases.record(page.url_path, page, PageRecord(id=number))
            return record, f"{page.url_path}, live version {live}"
        binder = kinds[kind].bind
        assert binder is not None
        return await binder(client, number)
    except ApiError as exc:
        if exc.status == 404:
            raise ConfigError(f"the site has no {kind} {number}") from None
        raise


class _SiteBase:
    """Page records that take the site as it is now (``import``, ``refresh``), with the digest and base a pull
    would record (``cmssync.plan.conflicts.site_base``): the content's page rendered as the planner renders it, its
    references resolved to what the state records (files) and the pages it manages; the page's stack displays named
    from its rendering, as pull names them (:class:`cmssync.sync.stack_displays.PageDisplays`)."""

    def __init__(self, workspace: Workspace, state: State, client: ConcreteClient) -> None:
        self.content = workspace.content
        self.displays = PageDisplays(client, (r.id for path, r in state.pages.items() if is_stack_path(path)))
        self.base_url = workspace.settings.site.url or ""
        self.resolve = Resolver(
            file_urls={path: record.url for path, record in state.files.items()},
            file_ids={path: str(record.id) for path, record in state.files.items()},
            page_ids={path: record.id for path, record in state.pages.items()},
        )

    async def record(self, path: str, page: Page, record: PageRecord) -> PageRecord:
        """``record`` with ``page``'s live version, and the digest and base of the content's page at ``path``
        against it (none when the content has no page there)."""
        version = page.version.id if page.version is not None else None
        digest: str | None = None
        base: PageBase | None = None
        spec = self.content.pages.get(path)
        if spec is not None:
            desired = render_desired(page_form(spec), path, self.resolve, base_url=self.base_url)
            live = to_live_page(await self.displays.named(page), version, self.base_url)
            digest, base = site_base(desired.fields, desired.areas, desired.end_date, desired.digest, live)
        return record.evolve(live_version_id=version, base=base, digest=digest)


@dataclass
class Refreshed:
    """What a refresh changed in the state."""

    rebased: list[str]
    gone: list[str]
    unchanged: int


async def refresh(workspace: Workspace) -> Refreshed:
    """Record the site's current live version of every managed page as its base, and forget the records of objects
    the site no longer has; nothing is written to the site.

    A page's base is recorded as a pull records it (:class:`_SiteBase`): the content's value where the site holds
    it, the site's where it differs. So the next plan shows every field where the content and the site differ as
    an ordinary update (no conflict), and an editor's change approved after the refresh as a site change, settled by
    the drift policy (not written over under ``drift: propose``). A pending draft cmssync started is kept (the next
    run finishes it)."""
    store = workspace.store
    result = Refreshed([], [], 0)
    async with holding_lock(store, "cmssync refresh"):
        state = workspace.load_state()
        async with workspace.client() as client:
            bases = _SiteBase(workspace, state, client)
            for path, record in sorted(state.pages.items()):
                try:
                    page = await client.get_page(record.id, includes=PAGE_INCLUDES)
                except ApiError as exc:
                    if exc.status != 404 and not isinstance(exc, PendingDeletion):
                        raise
                    state.forget_page(path)
                    result.gone.append(page_object_id(path))  # deleted, or in the trash
                    continue
                refreshed = await bases.record(path, page, record)
                if refreshed == record:
                    result.unchanged += 1
                    continue
                state.record_page(path, refreshed)
                result.rebased.append(f"{page_object_id(path)} (live version {refreshed.live_version_id})")
            for address, gone in await _gone_objects(client, state, workspace.kinds):
                if gone:
                    _forget(state, address)
                    result.gone.append(str(address))
        store.save(state)
    return result


async def _gone_objects(client: ConcreteClient, state: State, kinds: Registry) -> list[tuple[Address, bool]]:
    """The state's objects of the kinds bound by a site id (users, …), each with whether the site still has it."""
    found: list[tuple[Address, bool]] = []
    for kind in _binders(kinds):
        assert kind.bind is not None
        for address, record in list(addresses(state, kind.name)):
            try:
                await kind.bind(client, record.id)
            except ApiError as exc:
                if exc.status != 404:
                    raise
                found.append((address, True))
                continue
            found.append((address, False))
    return found


def describe(record: Any) -> dict[str, Any]:
    """A record as JSON data (``state show``): every record is a pydantic model."""
    data: dict[str, Any] = record.model_dump(mode="json")
    return data
