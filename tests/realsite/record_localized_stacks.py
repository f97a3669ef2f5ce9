"""Record what the REST API shows of a stack's localized versions on a site with two locale trees besides the
default one: ``python -m tests.realsite.record_localized_stacks ENV_FILE OUT`` (OUT:
``tests/conformance/concrete-9.3.1/localized-stacks.jsonl``).

Opt-in, against a real multilingual Concrete 9.3.1 site of ``../shared/realsite/`` with three trees, freshly reset
(``LOCALES=fr_FR,de_DE up.sh``, or ``reset.sh`` then ``add-locale.sh`` of a second locale with ``RESET_POINT=0``).
One scenario, ``localized-stacks``, in order:

* ``site``: ``GET /sites/default?includes=locales`` (the trees, in the order they were made);
* ``neutral``, ``neutral.children``: the first neutral stack (a page ``/!stacks/<handle>``) that has two or more
  localized versions (child pages, ids from ``PagePaths``), with its areas, and its children list;
* ``version.N``, ``version.N.children``: each localized version (in id order, N from 1) with its areas, and its
  children list;
* ``mark.N``, ``mark.N.approve``: a content block with the marker ``localized-stack-marker-N`` added to each
  version's ``Main`` and approved;
* ``public.<locale>``: each tree's home page as a guest: which version's marker the tree renders (the note).

What it shows: whether anything a read gives (path, name, type, template, locale, blocks, children) tells which tree a
localized version is for; the public pages say which it was. Only HTTP, plus ``mysql`` to find the stacks' ids (the
env's ``CONCRETE_DB``).
"""

from __future__ import annotations

import re
import sys
from typing import Any

from tests.realsite.record_lists import PREFIX, Recorder, items_of, record

MARKER = "localized-stack-marker"


class LocalizedStackRecorder(Recorder):
    def stack_pages(self) -> dict[str, int]:
        """Path → page id of every page below ``/!stacks`` (neutral stacks and their localized versions)."""
        rows = self.sql("SELECT cPath, cID FROM PagePaths WHERE cPath LIKE '/!stacks/%' AND ppIsCanonical = 1")
        return {path: int(cid) for path, cid in rows}

    def run(self) -> None:
        self.scenario = "localized-stacks"
        site = self.call("site", "GET", f"{PREFIX}/sites/default", params={"includes": "locales"}).json()["data"]
        pages = self.stack_pages()
        neutral, versions = next(
            (path, found)
            for path in sorted(pages, key=pages.__getitem__)
            if path.count("/") == 2
            for found in [sorted(pages[p] for p in pages if p.startswith(path + "/"))]
            if len(found) >= 2
        )
        self.call("neutral", "GET", f"{PREFIX}/pages/{pages[neutral]}", params={"includes": "areas"})
        self.call("neutral.children", "GET", f"{PREFIX}/pages/{pages[neutral]}/children")
        for number, version in enumerate(versions, start=1):
            self.call(f"version.{number}", "GET", f"{PREFIX}/pages/{version}", params={"includes": "areas"})
            self.call(f"version.{number}.children", "GET", f"{PREFIX}/pages/{version}/children")
        for number, version in enumerate(versions, start=1):
            block = {"type": "content", "value": {"content": f"<p>{MARKER}-{number}</p>"}}
            self.call(f"mark.{number}", "POST", f"{PREFIX}/pages/{version}/Main", json=block)
            newest = items_of(self.call("", "GET", f"{PREFIX}/page_versions/{version}").json())[0]
            route = f"{PREFIX}/page_versions/{version}/{newest['id']}"
            self.call(f"mark.{number}.approve", "PUT", route, json={"is_approved": True})
        for locale in items_of(site["locales"]):
            home = self.call("", "GET", f"{PREFIX}/pages/{locale['home_page_id']}").json()["data"]
            self.guest_page(f"public.{locale['language']}_{locale['country']}", home["path"] or "/", MARKER + r"-\d+")


def _run(recorder: LocalizedStackRecorder) -> None:
    recorder.run()


def facts(exchanges: list[dict[str, Any]]) -> list[tuple[str, int, Any]]:
    """What each exchange shows, free of the site's content, ids and dates: the trees' locales; for a stack page
    read, its path with the neutral stack's path as ``<stack>`` and its handle as ``<handle>``, whether its name and
    blocks are the neutral stack's, its type, template and locale; a children list's length; the markers a tree's
    public home shows."""
    neutral = next(e["response"]["body"]["data"] for e in exchanges if e["step"] == "neutral")
    handle = neutral["path"].rsplit("/", 1)[1]
    shown: list[tuple[str, int, Any]] = []
    for exchange in exchanges:
        step, response = exchange["step"], exchange["response"]
        body, fact = response["body"], None
        if step == "site":
            fact = [f"{t['language']}_{t['country']}" for t in items_of(body["data"]["locales"])]
        elif step == "neutral" or re.fullmatch(r"version\.\d+", step):
            page = body["data"]
            path = page["path"].replace(neutral["path"], "<stack>", 1).replace(handle, "<handle>")
            same = (page["name"] == neutral["name"], _block_ids(page) == _block_ids(neutral))
            fact = (path, *same, page["type"], page["template"], page["locale"])
        elif step.endswith(".children"):
            fact = len(items_of(body))
        elif step.startswith("public."):
            fact = sorted(set(re.findall(MARKER + r"-\d+", exchange.get("note", ""))))
        shown.append((step, response["status"], fact))
    return shown


def _block_ids(page: dict[str, Any]) -> list[int]:
    return [int(b["id"]) for a in items_of(page.get("areas")) for b in items_of(a["blocks"])]


if __name__ == "__main__":
    sys.exit(record(sys.argv[1:], LocalizedStackRecorder, _run))
