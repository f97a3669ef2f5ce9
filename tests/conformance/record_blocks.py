"""Record, on a real Concrete CMS 9.3.1 site, the round trip of every block type a client may meet.

For each case of ``block_cases.CASES``: the sample block's read (export form), a write of the stored form a client
would send (``block_cases.write_form``) on a page of its own between two marker content blocks, the read back,
the public page (how often the edited text shows: ``markers``), an update of one text field, its read back and the
public page again. Then edits in place of sample blocks the way ``cmssync apply`` makes them: blocks shared by the
pages of a page type (their defaults), and blocks inside layout/container sub-areas, with the public pages that
share them.

Ids the API does not show are learned by probes whose answers are in the recording: numeric file ids
(``{CCM:FID_DL_n}`` read back in export form), page-type ids (``page_list.ptID = n``) and file-folder ids
(``document_library.folderID = n``).

Usage (against a freshly reset site; it changes sample pages)::

    python3 -m tests.conformance.record_blocks --env /tmp/concrete-site.env
"""

from __future__ import annotations

import datetime
import re
import secrets
from typing import Any

from tests.conformance.block_cases import CASES, Case, Ids, hand_value, write_form
from tests.conformance.recorder import Recorder, area_path, arguments, read_env

PROBED_FILES = 45
PROBED_TYPES = 12
PROBED_FOLDERS = 12
_BEGIN, _END = '<p class="rec-begin">begin</p>', '<p class="rec-end">end</p>'
_PLAIN = re.compile(r"[A-Za-z0-9 ]{3,80}")


def _markers(case: Case, value: dict[str, Any], edited: str) -> dict[str, str]:
    """What the public page should (not) show: the edited text, and the field's first value when it is plain text
    (markup and entities would be counted differently by a theme)."""
    markers = {"edited": edited}
    first = str(value.get(case.edit or "", "")).strip()
    if _PLAIN.fullmatch(first):
        markers["original"] = first
    return markers


class Session:
    def __init__(self, rec: Recorder, rid: str) -> None:
        self.rec = rec
        self.rid = rid
        self.ids = Ids()
        self.samples: dict[str, tuple[int, str, str, dict[str, Any]]] = {}
        self.lab = 0
        self.site: list[dict[str, Any]] = []

    # --- setup ---------------------------------------------------------------------------------------------------

    def setup(self) -> None:
        self.rec.login("setup.token")
        self.rec.api("setup.files", "GET", "/files", query={"limit": "100"})
        site = self.rec.api(
            "setup.site", "GET", "/pages", query={"limit": "100", "includes": "areas,custom_attributes"}
        )["data"]
        self.site = site
        for page in site:
            self.ids.pages[page["path"] or "/"] = int(page["id"])
            for area in page["areas"]["data"]:
                for block in area["blocks"]["data"]:
                    self.samples.setdefault(block["type"], (int(page["id"]), page["path"] or "/", area["name"], block))
        lab = self.rec.api(
            "setup.lab",
            "POST",
            "/pages",
            json_body={"name": f"Block Types {self.rid}", "parent": 1, "type": "page", "template": "full"},
        )["data"]
        self.lab = int(lab["id"])
        probe_page = self.rec.api(
            "setup.probe_page",
            "POST",
            "/pages",
            json_body={"name": f"Probe {self.rid}", "parent": 1, "type": "page", "template": "full"},
        )["data"]
        self._probe(int(probe_page["id"]))
        self.rec.api("setup.probe_page.delete", "DELETE", f"/pages/{probe_page['id']}")

    def _probe(self, page: int) -> None:
        """Numeric ids behind export forms: one block per candidate id, read back in the POST answer. A page-type
        id that does not exist makes the export fail (HTTP 500), which ends that probe."""
        probe = "".join(f'<a href="{{CCM:FID_DL_{n}}}">{n}</a>' for n in range(1, PROBED_FILES + 1))
        read = self._add("setup.probe_numeric_file_ids", page, "content", {"content": probe})
        for prefix, name, number in re.findall(r'\{ccm:export:file:([^:{}]*):([^{}]*)\}">(\d+)<', read["content"]):
            self.ids.files.setdefault(f"{prefix}:{name}", int(number))
        for n in range(1, PROBED_TYPES + 1):
            read = self._add(f"setup.probe_page_type_ids.{n}", page, "page_list", {"ptID": n, "num": 1})
            found = re.fullmatch(r"\{ccm:export:pagetype:(.+)\}", read.get("ptID", ""))
            if not found:
                break
            self.ids.page_types[found.group(1)] = n
        for n in range(1, PROBED_FOLDERS + 1):
            read = self._add(f"setup.probe_folder_ids.{n}", page, "document_library", {"folderID": n})
            found = re.fullmatch(r"\{ccm:export:filefolder:(.*)\}", read.get("folderID", ""))
            if found:
                self.ids.folders[found.group(1)] = n

    def _add(self, step: str, page: int, block_type: str, value: dict[str, Any], note: str | None = None) -> Any:
        body = self.rec.api(
            step, "POST", f"/pages/{page}/Main", json_body={"type": block_type, "value": value}, note=note
        )
        data = body.get("data") if isinstance(body, dict) else None
        return data["value"] if isinstance(data, dict) else {}

    # --- one type ------------------------------------------------------------------------------------------------

    def record(self, case: Case) -> None:
        step = f"types.{case.name}"
        sample = self.samples.get(case.block_type)
        if case.value is None:
            if sample is None:
                return
            read = self.rec.api(f"{step}.sample", "GET", f"/blocks/{sample[3]['id']}")["data"]["value"]
            value = write_form(case.block_type, read if isinstance(read, dict) else {}, self.ids)
        else:
            value = write_form(case.block_type, hand_value(case, self.ids), self.ids)
        page = self.rec.api(
            f"{step}.page",
            "POST",
            "/pages",
            json_body={
                "name": f"Type {case.name.replace('.', ' ')} {self.rid}",
                "parent": self.lab,
                "type": "page",
                "template": "full",
            },
        )["data"]
        page_id, path = int(page["id"]), page["path"]
        self._add(f"{step}.begin", page_id, "content", {"content": _BEGIN})
        added = self.rec.api(
            f"{step}.add", "POST", f"/pages/{page_id}/Main", json_body={"type": case.block_type, "value": value}
        )
        self._add(f"{step}.end", page_id, "content", {"content": _END})
        data = added.get("data") if isinstance(added, dict) else None
        if not isinstance(data, dict):
            return
        block_id = int(data["id"])
        self.rec.api(f"{step}.read", "GET", f"/blocks/{block_id}")
        self.rec.approve(f"{step}.approve", page_id)
        text = f"Edited {case.block_type} {self.rid}"
        markers = _markers(case, value, text)
        self.rec.public(f"{step}.public", path, markers)
        edited = dict(value)
        if case.edit is not None:
            edited[case.edit] = text
        elif case.flip is not None:
            edited[case.flip] = "0" if str(edited.get(case.flip, "0")) == "1" else "1"
        updated = self.rec.api(
            f"{step}.update", "PUT", f"/pages/{page_id}/Main/{block_id}", json_body={"value": edited}
        )
        data = updated.get("data") if isinstance(updated, dict) else None
        if isinstance(data, dict):
            self.rec.api(f"{step}.read_updated", "GET", f"/blocks/{data['id']}")
        self.rec.approve(f"{step}.approve_update", page_id)
        self.rec.public(f"{step}.public_updated", path, markers)

    # --- edits in place ------------------------------------------------------------------------------------------

    def parent_choice(self) -> None:
        """A page list whose parent is the page's own parent: sent as a bare id (``save()`` compares it strictly
        with the parent's id and turns ``cThisParent`` on) and as the editor's "other page" choice (``cParentID:
        OTHER`` + ``cParentIDValue``: stored as the id, flags off)."""
        page = self.rec.api(
            "parent.page",
            "POST",
            "/pages",
            json_body={"name": f"Parent choice {self.rid}", "parent": self.lab, "type": "page", "template": "full"},
        )["data"]
        base = {"num": "3", "orderBy": "display_asc", "pageListTitle": "Siblings"}
        self._add("parent.bare_id", int(page["id"]), "page_list", {**base, "cParentID": self.lab})
        self._add(
            "parent.other", int(page["id"]), "page_list", {**base, "cParentID": "OTHER", "cParentIDValue": self.lab}
        )

    def edit_in_place(self, block_type: str, field: str, *, others: int) -> None:
        """Edit one text column of a sample block where it is, then read every public page that showed it."""
        step = f"inplace.{block_type}"
        holders = [
            (pid, path, area, block) for pid, path, area, block in self._all_blocks() if block["type"] == block_type
        ]
        if not holders:
            return
        page_id, path, area, block = holders[0]
        shared = [h for h in holders if h[3]["id"] == block["id"] and h[0] != page_id][:others]
        read = self.rec.api(f"{step}.read", "GET", f"/blocks/{block['id']}", query={"includes": "pages"})
        value = write_form(block_type, read["data"]["value"], self.ids)
        text = f"In place {block_type} {self.rid}"
        value[field] = text
        if block_type == "page_title":
            value["useCustomTitle"] = "1"
        markers = {"edited": text}
        self.rec.public(f"{step}.public_before", path, markers)
        self.rec.api(
            f"{step}.put",
            "PUT",
            area_path(page_id, area, int(block["id"])),
            json_body={"value": value},
            note=f"area {area!r}, block shared by {len(shared)} other page(s) shown below",
        )
        self.rec.api(f"{step}.recent", "GET", f"/pages/{page_id}", query={"version": "recent", "includes": "areas"})
        self.rec.approve(f"{step}.approve", page_id)
        self.rec.public(f"{step}.public_after", path, markers)
        for other_id, other_path, _, _ in shared:
            self.rec.api(f"{step}.other_page", "GET", f"/pages/{other_id}", query={"includes": "areas"})
            self.rec.public(f"{step}.other_public", other_path, markers)

    def _all_blocks(self) -> list[tuple[int, str, str, dict[str, Any]]]:
        """Every sample block as ``setup.site`` showed it (the cases before wrote only to pages of their own)."""
        seen: set[int] = set()
        found = []
        for page in sorted(self.site, key=lambda p: int(p["id"])):
            if int(page["id"]) in seen or int(page["id"]) >= self.lab:
                continue
            seen.add(int(page["id"]))
            for area in page["areas"]["data"]:
                for block in area["blocks"]["data"]:
                    found.append((int(page["id"]), page["path"] or "/", area["name"], block))
        return found


IN_PLACE = (
    ("page_title", "titleText", 1),
    ("next_previous", "nextLabel", 1),
    ("page_attribute_display", "attributeTitleText", 1),
    ("feature", "title", 0),
    ("testimonial", "name", 0),
    ("image", "altText", 0),
    ("page_list", "pageListTitle", 0),
)


def main() -> None:
    args = arguments(__doc__.split("\n")[0], "block-types.jsonl")
    rid = datetime.datetime.now(datetime.UTC).strftime("%m%d%H%M%S") + secrets.token_hex(2)
    rec = Recorder(read_env(args.env), args.out, "block-types")
    try:
        session = Session(rec, rid)
        session.setup()
        for case in CASES:
            session.record(case)
        for block_type, field, others in IN_PLACE:
            session.edit_in_place(block_type, field, others=others)
        session.parent_choice()
    finally:
        rec.close()


if __name__ == "__main__":
    main()
