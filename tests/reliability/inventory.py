"""What is on the emulated site, read through plain HTTP (``RawSite``), and the checks every reliability test ends with.

The checks do not trust cmssync's client, observer or planner: pages are found by walking the page tree, blocks are
counted per area of each page's live version, files by stored name, users by username, groups by name. A duplicate
shows up here even where the server would hide it from a path lookup: Concrete gives a second page with the same
name the handle ``name-1``, so a duplicated page is an *extra* path, not a repeated one.

Lists (files, users, groups) are read in one request of 100: the sites these tests build stay below that, which is
asserted, because a real server's cursor pagination repeats and skips items whose dates tie (concrete-api.md §13).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from cmssync.content.site import SiteContent
from cmssync.state.records import State
from tests.support.rawsite import RawSite

LIST_LIMIT = 100


@dataclass(frozen=True)
class LivePage:
    id: int
    path: str
    blocks: dict[str, tuple[str, ...]]
    """Area name → block types of the live version, in order."""


@dataclass
class Inventory:
    pages: dict[str, LivePage] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    """File id → stored file name."""
    users: Counter[str] = field(default_factory=Counter)
    user_ids: dict[int, str] = field(default_factory=dict)
    groups: Counter[str] = field(default_factory=Counter)
    group_ids: dict[int, str] = field(default_factory=dict)
    requests: int = 0

    @property
    def file_names(self) -> Counter[str]:
        return Counter(self.files.values())


def take_inventory(raw: RawSite, *, block_pages: set[str] | None = None) -> Inventory:
    """Everything on the site; blocks are read only for ``block_pages`` (default: every page)."""
    inventory = Inventory()
    home = raw.get("/pages/1")
    todo: list[tuple[int, str]] = [(int(home["id"]), "/")]
    found: list[tuple[int, str]] = []
    while todo:
        page_id, path = todo.pop()
        found.append((page_id, path))
        children = raw.get(f"/pages/{page_id}/children")
        inventory.requests += 1
        todo += [(int(child["id"]), str(child["path"])) for child in children]
    for page_id, path in found:
        blocks: dict[str, tuple[str, ...]] = {}
        if block_pages is None or path in block_pages:
            page = raw.get(f"/pages/{page_id}", includes="areas")
            inventory.requests += 1
            blocks = {area["name"]: tuple(block["type"] for block in _data(area["blocks"])) for area in _data(page)}
        if path in inventory.pages:
            raise AssertionError(f"the page tree shows {path} twice (ids {inventory.pages[path].id} and {page_id})")
        inventory.pages[path] = LivePage(page_id, path, blocks)
    for item in _list(raw, "/files"):
        inventory.files[str(item["id"]).lower()] = PurePosixPath(str(item["url"]).split("?")[0]).name
    for item in _list(raw, "/users"):
        inventory.users[str(item["username"])] += 1
        inventory.user_ids[int(item["id"])] = str(item["username"])
    for item in _list(raw, "/groups"):
        inventory.groups[str(item["name"])] += 1
        inventory.group_ids[int(item["id"])] = str(item["name"])
    inventory.requests += 4
    return inventory


def _data(value: Any) -> list[dict[str, Any]]:
    """A page's ``areas`` or an area's ``blocks``, with or without the ``{"data": …}`` envelope."""
    if isinstance(value, dict) and "areas" in value:
        value = value["areas"]
    if isinstance(value, dict):
        value = value.get("data", [])
    return list(value or [])


def _list(raw: RawSite, path: str) -> list[dict[str, Any]]:
    items = raw.get(path, limit=LIST_LIMIT)
    assert len(items) < LIST_LIMIT, f"{path}: {len(items)} items; the reliability sites must stay below {LIST_LIMIT}"
    return list(items)


def problems(before: Inventory, after: Inventory, content: SiteContent, state: State | None) -> list[str]:
    """Duplicates, losses and state records that point nowhere; empty when the site is exactly as it should be.

    ``before`` is the site before cmssync touched it (the seed): what was there stays, what the content adds
    appears exactly once. Deletes are not expected (these tests never prune).
    """
    found: list[str] = []
    found += _page_problems(before, after, content)
    found += _file_problems(before, after, content, state)
    for username in content.users:
        if after.users[username] != 1:
            found.append(f"user {username}: {after.users[username]} on the site")
    for name in content.of("group"):
        if after.groups[name] != 1:
            found.append(f"group {name}: {after.groups[name]} on the site (duplicated)")
    for name, count in after.groups.items():
        if name not in content.of("group") and count != before.groups[name]:
            found.append(f"group {name}: {count} on the site, {before.groups[name]} before, not in the content")
    if state is not None:
        found += _state_problems(after, state)
    return found


def duplicates(found: list[str]) -> int:
    return sum(1 for problem in found if "duplicat" in problem or "extra" in problem)


def _page_problems(before: Inventory, after: Inventory, content: SiteContent) -> list[str]:
    found: list[str] = []
    expected = set(before.pages) | set(content.pages)
    found += [f"page {path}: extra page on the site (a duplicate?)" for path in sorted(set(after.pages) - expected)]
    found += [f"page {path}: missing" for path in sorted(expected - set(after.pages))]
    for path, spec in content.pages.items():
        live = after.pages.get(path)
        if live is None:
            continue
        for area, blocks in spec.areas.items():
            wanted = tuple(block.type for block in blocks)
            have = live.blocks.get(area, ())
            if have != wanted:
                kind = "duplicated" if len(have) > len(wanted) else "wrong"
                found.append(f"page {path} area {area}: blocks {kind}: {list(have)} on the site, {list(wanted)} wanted")
    return found


def _file_problems(before: Inventory, after: Inventory, content: SiteContent, state: State | None) -> list[str]:
    found: list[str] = []
    names = Counter(PurePosixPath(path).name for path in content.files)
    new = {file_id: name for file_id, name in after.files.items() if file_id not in before.files}
    new_names = Counter(new.values())
    for name, count in sorted(new_names.items()):
        if name not in names:
            found.append(f"file {name}: extra file on the site, not in the content")
        elif count > names[name]:
            found.append(f"file {name}: {count} new copies on the site, {names[name]} in the content (duplicated)")
    for path in content.files:
        record = state.files.get(path) if state is not None else None
        name = PurePosixPath(path).name
        if record is None and new_names[name] == 0:
            found.append(f"file {path}: missing (neither uploaded nor adopted)")
    return found


def _state_problems(after: Inventory, state: State) -> list[str]:
    found: list[str] = []
    page_ids = {page.id: path for path, page in after.pages.items()}
    for path, record in state.pages.items():
        if page_ids.get(record.id) != path:
            found.append(f"state page {path}: id {record.id} is {page_ids.get(record.id, 'not on the site')}")
    for path, file_record in state.files.items():
        if str(file_record.id).lower() not in after.files:
            found.append(f"state file {path}: id {file_record.id} is not on the site")
    for username, user_record in state.users.items():
        if after.user_ids.get(user_record.id) != username:
            found.append(f"state user {username}: id {user_record.id} is {after.user_ids.get(user_record.id)}")
    for name, group_record in state.records_of("group").items():
        if after.group_ids.get(group_record.id) != name:
            found.append(f"state group {name}: id {group_record.id} is {after.group_ids.get(group_record.id)}")
    return found


PRICE_LIST = "files/documents/price-list.txt"
"""The example site's file that the replace tests give new bytes."""


def stale_files(raw: RawSite, state: State) -> list[str]:
    """Site files with the price list's name that ``state`` does not hold (left by a replace)."""
    held = {str(record.id).lower() for record in state.files.values()}
    return [i for i, name in take_inventory(raw, block_pages=set()).files.items() if "price" in name and i not in held]
