"""Record what the real site's page list does over pages whose dates tie.

``python -m tests.realsite.record_page_ties ENV_FILE OUT``, opt-in, against a fresh real Concrete 9.3.1 site of
``../shared/realsite/`` (``reset.sh`` before and after). Writes JSONL as ``record_lists`` does, scenario
``page_ties``: 130 pages created under one new parent (and 2 under each of 3 of them), all then given one
``Collections.cDateModified`` through the database (a bulk import), and ``GET /pages`` read with the cursors a client
could use: none, the tied page with the highest id, one inside the group, the lowest id seen, the last item of each
page (a walk), at limits 100, 50 and 10, and for each page never listed the next tied id above it. The notes say
which tied ids came back and which never did, and which parents the list shows.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.realsite.record_lists import PREFIX, Recorder, record

TIED_PAGES = 130


class PageTiesRecorder(Recorder):
    def new_page(self, parent: int, name: str) -> int:
        data = {"parent": parent, "name": name, "type": "page", "template": "full"}
        answer = self.call("", "POST", f"{PREFIX}/pages", json=data)
        answer.raise_for_status()
        return int(answer.json()["data"]["id"])

    def page_ties(self) -> None:
        self.scenario = "page_ties"
        top = self.new_page(1, "Tied parent")
        children = [self.new_page(top, f"Tied {number:03d}") for number in range(TIED_PAGES)]
        parents = children[10], children[TIED_PAGES // 2], children[-10]
        grandchildren = [self.new_page(parent, f"Below {n}") for parent in parents for n in (1, 2)]
        group = sorted([top, *children, *grandchildren])
        listed = ",".join(map(str, group))
        stamp = self.sql(f"SELECT MIN(cDateModified) FROM Collections WHERE cID IN ({listed})")[0][0]
        self.sql(f"UPDATE Collections SET cDateModified = '{stamp}' WHERE cID IN ({listed})")
        cache = Path(self.env["CONCRETE_SITE_DIR"]) / "application" / "files" / "cache"
        subprocess.run(["rm", "-rf", str(cache)], check=True)
        tied = set(group)
        seen: set[int] = set()

        def pages_list(step: str, params: dict[str, str], what: str) -> list[int]:
            response = self.call(step, "GET", f"{PREFIX}/pages", params=params)
            got = [int(item["id"]) for item in response.json()["data"]]
            members = [i for i in got if i in tied]
            new = set(members) - seen
            seen.update(members)
            self.patch_note(
                f"{what}; ids in answer order: {got}; {len(members)} of them tied, "
                f"{len(new)} new; tied ids seen so far: {len(seen)} of {len(tied)}"
            )
            return got

        setup = (
            f"setup (not recorded): {len(group)} pages created through the API: a parent {top} under home, "
            f"{TIED_PAGES} children under it ({children[0]}..{children[-1]}), 2 under each of {list(parents)} "
            f"({grandchildren}); then through the database all given Collections.cDateModified '{stamp}' "
            "(a bulk import in one second) and the site's cache cleared; the sample pages are older"
        )
        first = pages_list("pages.ties.first.limit100", {"limit": "100"}, setup + ". First page of 100")
        pages_list(
            "pages.ties.after_highest_id",
            {"limit": "100", "after": str(max(group))},
            f"Cursor: the tied page with the highest id ({max(group)})",
        )
        middle = group[len(group) // 2]
        pages_list(
            "pages.ties.after_middle_id",
            {"limit": "100", "after": str(middle)},
            f"Cursor: a tied page in the middle of the group (id {middle})",
        )
        lowest = min(i for i in first if i in tied)
        after_lowest = pages_list(
            "pages.ties.after_lowest_seen",
            {"limit": "100", "after": str(lowest)},
            f"Cursor: the lowest tied id of the first page ({lowest})",
        )
        below = [i for i in after_lowest if i in tied]
        if below:
            pages_list(
                "pages.ties.after_lowest_seen.again",
                {"limit": "100", "after": str(min(below))},
                f"Cursor: the lowest tied id of the page before ({min(below)})",
            )
        for limit in ("100", "50", "10"):
            self.walk(pages_list, limit)
        # The best cursor for a page never listed: the next tied id above it (a cursor's answer is the first
        # ``limit`` tied pages below it in the server's order; a higher cursor only adds pages to pass over).
        for unseen in sorted(tied - seen):
            above = min(i for i in group if i > unseen) if unseen < max(group) else None
            if above is not None:
                pages_list(
                    f"pages.ties.after_next_above.{unseen}",
                    {"limit": "100", "after": str(above)},
                    f"Cursor: the next tied id above {unseen}, never listed so far ({above})",
                )
        missing = sorted(tied - seen)
        found = [p for n, p in enumerate(parents) if seen & set(grandchildren[2 * n : 2 * n + 2])]
        self.call(
            "pages.ties.summary.children_of_parent",
            "GET",
            f"{PREFIX}/pages/{top}/children",
            note=(
                f"After all the lists above: {len(seen)} of the {len(tied)} tied pages came back at least once; never "
                f"listed: {missing}. A page's only clue to its parent is its path (no parent id, no "
                f"child count), so a parent shows only through a listed child: of the parents {list(parents)} in the "
                f"group, the list shows {found} (children listed: {sorted(seen & set(grandchildren))}). "
                f"The children list of {top} (one request) names all {TIED_PAGES} of its children."
            ),
        )

    def walk(self, pages_list: Any, limit: str) -> None:
        """The walk a client makes: the first page, then ``after`` the last item of each page until one is short."""
        got = pages_list(f"pages.ties.walk.limit{limit}.1", {"limit": limit}, f"Walk at limit {limit}: first page")
        for number in range(2, 40):
            if len(got) < int(limit):
                return
            got = pages_list(
                f"pages.ties.walk.limit{limit}.{number}",
                {"limit": limit, "after": str(got[-1])},
                f"Walk at limit {limit}: after the last item of the page before ({got[-1]})",
            )


if __name__ == "__main__":
    sys.exit(record(sys.argv[1:], PageTiesRecorder, PageTiesRecorder.page_ties))
