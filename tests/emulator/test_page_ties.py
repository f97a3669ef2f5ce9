"""The sandbox's page list over a group of pages in one second answers as the real 9.3.1 site did in
``tests/conformance/concrete-9.3.1/page-ties.jsonl`` (recorded with ``tests/realsite/record_page_ties.py``):
137 pages with one ``cDateModified``, read with every cursor a client could use.

The facts, each checked on the recording and then on the sandbox with a tied group of the same size: a cursor's
answer holds only tied pages below the cursor's id, as many as fit ``limit``, in one order of the server's own that
every answer follows; the best cursor for a page (the next tied id above it) still leaves some pages never listed;
and a listed page names no parent and no child count, only its path.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx

from cmssync.emulator.embedded import Sandbox
from tests.emulator.helpers import connected

RECORDING = Path(__file__).resolve().parents[1] / "conformance" / "concrete-9.3.1" / "page-ties.jsonl"
GROUP = 137  # the recording's tied group: a parent, 130 children, 6 grandchildren


def _recorded() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RECORDING.read_text(encoding="utf-8").splitlines()]


class Answers:
    """What a set of page-list answers shows of one tied group (its ids known from the children lists)."""

    def __init__(self, group: set[int]) -> None:
        self.group = group
        self.seen: set[int] = set()
        self.orders: list[list[int]] = []

    def add(self, params: dict[str, str], items: list[dict[str, Any]]) -> list[int]:
        got = [int(item["id"]) for item in items]
        tied = [i for i in got if i in self.group]
        after = int(params["after"]) if "after" in params else None
        below = sorted(i for i in self.group if after is None or i < after)
        assert all(i in below for i in tied), (params, tied)  # only tied pages below the cursor
        assert len(tied) == min(int(params["limit"]), len(below)), (params, len(tied))  # as many as fit
        assert got[: len(tied)] == tied  # the group first, then older pages
        self.seen.update(tied)
        self.orders.append(tied)
        return got

    def one_order(self) -> bool:
        """Every answer lists its tied pages in the order of one ranking of the group."""
        rank: dict[tuple[int, int], bool] = {}
        for order in self.orders:
            for n, first in enumerate(order):
                for second in order[n + 1 :]:
                    if rank.get((second, first)):
                        return False
                    rank[(first, second)] = True
        return True

    def never_listed(self) -> set[int]:
        return self.group - self.seen


def test_the_recorded_answers_show_the_facts() -> None:
    lines = _recorded()
    stamp = lines[0]["response"]["body"]["data"][0]["date_last_updated"]
    setup = lines[0]["note"]
    group_size = int(re.search(r"tied ids seen so far: \d+ of (\d+)", setup).group(1))  # type: ignore[union-attr]
    assert group_size == GROUP
    children = next(x for x in lines if x["step"] == "pages.ties.summary.children_of_parent")["response"]["body"]
    top = int(re.search(r"a parent (\d+) under home", setup).group(1))  # type: ignore[union-attr]
    below = {int(n) for n in re.search(r"\(\[([\d, ]+)\]\)", setup).group(1).split(", ")}  # type: ignore[union-attr]
    group = {top, *(int(page["id"]) for page in children["data"]), *below}
    assert len(group) == GROUP
    answers = Answers(group)
    for line in lines:
        if line["request"]["path"].endswith("/pages"):
            items = line["response"]["body"]["data"]
            answers.add(line["request"]["query"], items)
            assert all(item["date_last_updated"] == stamp for item in items if int(item["id"]) in group)
    assert answers.one_order()
    assert answers.never_listed()  # recorded: 7 of 137 never came back, whatever the cursor
    assert len(children["data"]) == 130  # one children list names them all


def test_the_sandbox_lists_a_tied_page_group_as_the_real_site_did(sandbox: Sandbox) -> None:
    recorded_item = _recorded()[0]["response"]["body"]["data"][0]
    with connected(sandbox, "empty", f"pages={GROUP}") as http:
        group = _generated(http)
        assert len(group) >= GROUP
        answers = Answers(group)
        _read_like_the_recording(http, answers)
        item = http.get("/pages", params={"limit": "1"}).json()["data"][0]
    assert answers.one_order()
    assert answers.never_listed()
    assert set(item) == set(recorded_item)  # no parent id, no child count: only the path hints at a parent
    assert not {"parent", "parent_id", "children", "child_count"} & set(item)


def _generated(http: httpx.Client) -> set[int]:
    """The generated pages (all in one second), from the children lists, and whatever else shares their date."""
    pages = http.get("/pages/1/children").json()["data"]
    ids = {int(page["id"]) for page in pages}
    for section in list(ids):
        ids |= {int(page["id"]) for page in http.get(f"/pages/{section}/children").json()["data"]}
    stamp = http.get(f"/pages/{max(ids)}").json()["data"]["date_last_updated"]
    if http.get("/pages/1").json()["data"]["date_last_updated"] == stamp:
        ids.add(1)
    return ids


def _read_like_the_recording(http: httpx.Client, answers: Answers) -> None:
    def read(params: dict[str, str]) -> list[int]:
        return answers.add(params, http.get("/pages", params=params).json()["data"])

    group = sorted(answers.group)
    first = read({"limit": "100"})
    read({"limit": "100", "after": str(group[-1])})
    read({"limit": "100", "after": str(group[len(group) // 2])})
    read({"limit": "100", "after": str(min(i for i in first if i in answers.group))})
    for limit in (100, 50, 10):
        got = read({"limit": str(limit)})
        while len(got) == limit:
            got = read({"limit": str(limit), "after": str(got[-1])})
    for unseen in sorted(answers.never_listed()):
        above = [i for i in group if i > unseen]
        if above:
            read({"limit": "100", "after": str(above[0])})
