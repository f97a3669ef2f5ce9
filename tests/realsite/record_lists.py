"""Record what the real site's modification-ordered lists do: ``python -m tests.realsite.record_lists ENV_FILE OUT``.

Opt-in, against a real Concrete 9.3.1 site of ``../shared/realsite/`` (its env file; the site should be fresh:
``reset.sh``). Writes JSONL in the format of ``../shared/conformance/concrete-9.3.1/README.md`` (tokens and secrets
redacted) with two scenarios:

* ``ties``: 80 files and 80 users are created, then given one shared ``fvDateAdded`` / ``uDateAdded`` through the
  database (what a bulk import within one second gives), and the lists are read with several cursors. The notes
  name the numeric ids (``fID``, ``uID``) of what came back, read from the database, since the API shows UUIDs.
* ``feed``: ``GET /pages?limit=5``, ``GET /files?limit=5`` and ``GET /users?limit=5`` after each kind of edit (a
  page PUT, its approval, a block update, a block add, their approval; a file update and a new upload; a user
  update and a new user), one second apart so that dates differ.

Only speaks HTTP to the site, plus ``mysql`` for the two date updates and the id lookups (the env's
``CONCRETE_DB``).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import httpx

from bench.realsite_bench import read_env

PREFIX = "/ccm/api/1.0"
SCOPES = (
    "account:read system:info:read sites:read files:read files:add files:update files:delete pages:read pages:add "
    "pages:update pages:delete pages:areas:add_block pages:areas:delete_block pages:areas:update_block "
    "pages:versions:read pages:versions:update pages:versions:delete blocks:read blocks:update blocks:delete "
    "users:read users:add users:update users:delete groups:read groups:add"
)
TIED = 80
REDACTED = "<token:token.password.admin:access_token>"


R = TypeVar("R", bound="Recorder")


class Recorder:
    def __init__(self, env: dict[str, str], out: Path) -> None:
        self.env = env
        self.http = httpx.Client(base_url=env["CONCRETE_BASE"], timeout=60)
        self.out = out.open("w", encoding="utf-8")
        self.seq = 0
        self.token = ""
        self.scenario = "ties"
        self.host = ""  # a Host header other than the base URL's (which site of a multi-site install answers)

    def sql(self, query: str) -> list[list[str]]:
        command = [*shlex.split(self.env["CONCRETE_DB"]), "-N", "-B", "-e", query]
        result = subprocess.run(command, capture_output=True, text=True, check=True)
        return [line.split("\t") for line in result.stdout.splitlines() if line]

    def call(self, step: str, method: str, path: str, *, note: str = "", **kwargs: Any) -> httpx.Response:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.host:
            headers["Host"] = self.host
        started = time.perf_counter()
        response = self.http.request(method, path, headers=headers, **kwargs)
        elapsed = (time.perf_counter() - started) * 1000
        if step:
            self.write(step, method, path, kwargs, response, elapsed, note)
        return response

    def write(
        self, step: str, method: str, path: str, kwargs: dict[str, Any], response: httpx.Response, ms: float, note: str
    ) -> None:
        body: Any = None
        if "json" in kwargs:
            body = {"json": kwargs["json"]}
        elif "data" in kwargs:
            body = {"form": kwargs["data"]}
        elif "files" in kwargs:
            body = {"multipart": {"fields": {}, "files": [{"field": "file", "filename": kwargs["files"]["file"][0]}]}}
        try:
            answer: Any = response.json()
        except ValueError:
            answer = response.text[:2000]
        line = {
            "seq": self.seq,
            "scenario": self.scenario,
            "step": step,
            **({"note": note} if note else {}),
            "request": {
                "method": method,
                "path": path,
                "query": kwargs.get("params"),
                "headers": (
                    {"authorization": f"Bearer {REDACTED}", **({"host": self.host} if self.host else {})}
                    if self.token
                    else None
                ),
                "content_type": "application/json" if "json" in kwargs else None,
                "body": body,
            },
            "response": {
                "status": response.status_code,
                "content_type": response.headers.get("content-type"),
                "headers": {k: v for k, v in response.headers.items() if k in ("content-type", "cache-control")},
                "body": answer,
            },
            "elapsed_ms": round(ms, 1),
        }
        self.out.write(json.dumps(line) + "\n")
        self.seq += 1

    def login(self) -> None:
        form = {
            "grant_type": "password",
            "client_id": self.env["CONCRETE_CLIENT_ID"],
            "client_secret": self.env["CONCRETE_CLIENT_SECRET"],
            "username": self.env["CONCRETE_ADMIN_USER"],
            "password": self.env["CONCRETE_ADMIN_PASSWORD"],
            "scope": SCOPES,
        }
        answer = self.http.post("/oauth/2.0/token", data=form, headers={"Accept": "application/json"})
        answer.raise_for_status()
        self.token = answer.json()["access_token"]

    def guest_page(self, step: str, path: str, markers: str | Callable[[str], str]) -> None:
        """A public page read as a guest, recorded with the markers it shows (``markers``: their pattern) noted, or
        what ``markers(its HTML)`` says of it."""
        answer = self.http.get(path, headers={"Accept": "text/html"})
        if callable(markers):
            shown = markers(answer.text)
        else:
            shown = f"markers {sorted(set(re.findall(markers, answer.text)))}"
        token, self.token = self.token, ""  # recorded as a guest's request
        self.write(step, "GET", path, {}, answer, 0.0, f"public page | {shown}")
        self.token = token

    # -- ties ---------------------------------------------------------------------------------------------------

    def file_ids(self, body: Any) -> list[int]:
        uuids = [item["id"] for item in body.get("data", [])]
        if not uuids:
            return []
        quoted = ",".join(f"'{u}'" for u in uuids)
        by_uuid = {uuid: int(fid) for fid, uuid in self.sql(f"SELECT fID, fUUID FROM Files WHERE fUUID IN ({quoted})")}
        return [by_uuid.get(u, -1) for u in uuids]

    def files_list(self, step: str, params: dict[str, str], what: str) -> tuple[list[str], list[int]]:
        response = self.call(step, "GET", f"{PREFIX}/files", params=params, note="")
        body = response.json()
        fids = self.file_ids(body)
        self.patch_note(f"{what}; fIDs in answer order: {fids}")
        return [item["id"] for item in body["data"]], fids

    def users_list(self, step: str, params: dict[str, str], what: str) -> list[int]:
        response = self.call(step, "GET", f"{PREFIX}/users", params=params)
        ids = [int(item["id"]) for item in response.json()["data"]]
        self.patch_note(f"{what}; uIDs in answer order: {ids}")
        return ids

    def new_page(self, step: str, name: str) -> tuple[int, str]:
        """A new page under home (``page`` type, ``full`` template), its name made unique by the time: id, path."""
        body = {"parent": 1, "name": f"{name} {time.strftime('%m%d%H%M%S')}", "type": "page", "template": "full"}
        page = self.call(step, "POST", f"{PREFIX}/pages", json=body).json()["data"]
        return int(page["id"]), str(page["path"])

    def approve_recent(self, step: str, page: int) -> None:
        """Approve the page's newest version (what an editor's "Publish" does)."""
        newest = items_of(self.call("", "GET", f"{PREFIX}/page_versions/{page}").json())[0]
        self.call(step, "PUT", f"{PREFIX}/page_versions/{page}/{newest['id']}", json={"is_approved": True})

    def patch_note(self, note: str) -> None:
        """Set the note of the line just written (it needs the answer)."""
        self.out.flush()
        path = Path(self.out.name)
        lines = path.read_text(encoding="utf-8").splitlines()
        last = json.loads(lines[-1])
        last["note"] = note
        lines[-1] = json.dumps(last)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.out.seek(0, 2)

    def ties(self) -> None:
        self.scenario = "ties"
        uploaded: list[str] = []
        for number in range(TIED):
            files = {"file": (f"tie-{number:03d}.txt", f"tied file {number}\n".encode(), "text/plain")}
            answer = self.call("", "POST", f"{PREFIX}/files", files=files)
            answer.raise_for_status()
            uploaded.append(answer.json()["data"]["id"])
        quoted = ",".join(f"'{u}'" for u in uploaded)
        rows = self.sql(f"SELECT fID FROM Files WHERE fUUID IN ({quoted}) ORDER BY fID")
        fids = [int(r[0]) for r in rows]
        # One second for the whole group, after the install (the sample content stays older); the file's own
        # date too, which the files list's cursor compares (Files.fDateAdded) while it sorts by the version's.
        stamp = self.sql(f"SELECT MIN(fDateAdded) FROM Files WHERE fID IN ({','.join(map(str, fids))})")[0][0]
        self.sql(f"UPDATE FileVersions SET fvDateAdded = '{stamp}' WHERE fID IN ({','.join(map(str, fids))})")
        self.sql(f"UPDATE Files SET fDateAdded = '{stamp}' WHERE fID IN ({','.join(map(str, fids))})")
        user_ids = []
        for number in range(TIED):
            data = {"username": f"tie_{number:03d}", "email": f"tie{number:03d}@example.com", "password": "pw-12345"}
            answer = self.call("", "POST", f"{PREFIX}/users", json=data)
            answer.raise_for_status()
            user_ids.append(int(answer.json()["data"]["id"]))
        self.sql(f"UPDATE Users SET uDateAdded = '{stamp}' WHERE uID IN ({','.join(map(str, user_ids))})")
        cache = Path(self.env["CONCRETE_SITE_DIR"]) / "application" / "files" / "cache"
        subprocess.run(["rm", "-rf", str(cache)], check=True)  # what clearing the site's cache does
        setup = (
            f"setup (not recorded): {TIED} files uploaded (fIDs {fids[0]}..{fids[-1]}) and {TIED} users created "
            f"(uIDs {user_ids[0]}..{user_ids[-1]}), then through the database all given fvDateAdded / uDateAdded "
            f"'{stamp}' (a bulk import in one second; Files.fDateAdded too) and the site's cache cleared; the 36 "
            "sample files and the super admin are older"
        )
        uuid_of = {int(fid): uuid for fid, uuid in self.sql(f"SELECT fID, fUUID FROM Files WHERE fUUID IN ({quoted})")}
        self.files_list("files.ties.first.limit100", {"limit": "100"}, setup + ". First page of 100")
        for limit in ("10", "30"):
            uuids, _ = self.files_list(f"files.ties.first.limit{limit}", {"limit": limit}, f"First page of {limit}")
            self.files_list(
                f"files.ties.after_last.limit{limit}",
                {"limit": limit, "after": uuids[-1]},
                f"Cursor: the last item of the page before (limit {limit})",
            )
        top = max(fids)
        self.files_list(
            "files.ties.after_highest_fid",
            {"limit": "100", "after": uuid_of[top]},
            f"Cursor: the tied file with the highest fID ({top}): the rest of the group ({TIED - 1}) fits one page",
        )
        middle = fids[len(fids) // 2]
        self.files_list(
            "files.ties.after_middle_fid.limit30",
            {"limit": "30", "after": uuid_of[middle]},
            f"Cursor: a tied file in the middle of the group (fID {middle}), limit 30",
        )
        self.users_list("users.ties.first.limit100", {"limit": "100"}, "First page of 100 (users)")
        for limit in ("10", "30"):
            ids = self.users_list(f"users.ties.first.limit{limit}", {"limit": limit}, f"First page of {limit}")
            self.users_list(
                f"users.ties.after_last.limit{limit}",
                {"limit": limit, "after": str(ids[-1])},
                f"Cursor: the last item of the page before (limit {limit})",
            )
        self.users_list(
            "users.ties.after_highest_uid",
            {"limit": "100", "after": str(max(user_ids))},
            f"Cursor: the tied user with the highest uID ({max(user_ids)})",
        )
        self.users_list(
            "users.ties.after_middle_uid.limit30",
            {"limit": "30", "after": str(user_ids[len(user_ids) // 2])},
            f"Cursor: a tied user in the middle of the group (uID {user_ids[len(user_ids) // 2]}), limit 30",
        )

    # -- feed ---------------------------------------------------------------------------------------------------

    def heads(self, what: str) -> None:
        time.sleep(0.2)
        self.call(f"feed.pages.after_{what}", "GET", f"{PREFIX}/pages", params={"limit": "5"}, note=f"after {what}")
        self.call(f"feed.files.after_{what}", "GET", f"{PREFIX}/files", params={"limit": "5"}, note=f"after {what}")
        self.call(f"feed.users.after_{what}", "GET", f"{PREFIX}/users", params={"limit": "5"}, note=f"after {what}")
        time.sleep(1.1)  # the next change gets a later second

    def feed(self) -> None:
        self.scenario = "feed"
        self.heads("nothing")
        pages = self.call("", "GET", f"{PREFIX}/pages/1/children").json()["data"]
        page = next(p for p in pages if p["path"] == "/about")
        pid = page["id"]
        self.call("feed.put_page", "PUT", f"{PREFIX}/pages/{pid}", json={"name": "About (edited)"})
        self.heads("page_put_unapproved")
        versions = self.call("", "GET", f"{PREFIX}/page_versions/{pid}").json()["data"]
        draft = max(int(v["id"]) for v in versions)
        self.call("feed.approve_page", "PUT", f"{PREFIX}/page_versions/{pid}/{draft}", json={"is_approved": True})
        self.heads("page_approval")
        listed = self.call("", "GET", f"{PREFIX}/pages/1/children", params={"includes": "areas"}).json()["data"]
        other, area = next(
            (p, a)
            for p in listed
            if p["id"] != pid
            for a in items_of(p.get("areas"))
            if any(b.get("type") == "content" for b in items_of(a["blocks"]))
        )
        block = next(b for b in items_of(area["blocks"]) if b.get("type") == "content")
        route = f"{PREFIX}/pages/{other['id']}/{quote(area['name'])}"
        self.call("feed.update_block", "PUT", f"{route}/{block['id']}", json={"value": {"content": "<p>edited</p>"}})
        self.heads("block_update_unapproved")
        self.call("feed.add_block", "POST", route, json={"type": "content", "value": {"content": "<p>added</p>"}})
        self.heads("block_add_unapproved")
        versions = self.call("", "GET", f"{PREFIX}/page_versions/{other['id']}").json()["data"]
        draft = max(int(v["id"]) for v in versions)
        self.call(
            "feed.approve_blocks", "PUT", f"{PREFIX}/page_versions/{other['id']}/{draft}", json={"is_approved": True}
        )
        self.heads("block_approval")
        files = self.call("", "GET", f"{PREFIX}/files", params={"limit": "100"}).json()["data"]
        oldest = files[-1]
        self.call("feed.update_file", "PUT", f"{PREFIX}/files/{oldest['id']}", json={"title": "Retitled"})
        self.heads("file_update")
        upload = {"file": ("feed-new.txt", b"a new file\n", "text/plain")}
        self.call("feed.upload_file", "POST", f"{PREFIX}/files", files=upload)
        self.heads("file_upload")
        users = self.call("", "GET", f"{PREFIX}/users", params={"limit": "100"}).json()["data"]
        first = min(users, key=lambda u: int(u["id"]) if int(u["id"]) > 1 else 10**9)
        self.call("feed.update_user", "PUT", f"{PREFIX}/users/{first['id']}", json={"email": "changed@example.com"})
        self.heads("user_update")
        data = {"username": "feed_new", "email": "feed-new@example.com", "password": "pw-12345"}
        self.call("feed.create_user", "POST", f"{PREFIX}/users", json=data)
        self.heads("user_create")


def items_of(value: Any) -> list[dict[str, Any]]:
    return list(value.get("data", [])) if isinstance(value, dict) else list(value or [])


def record(argv: list[str], recorder_class: type[R], *steps: Callable[[R], None]) -> int:
    """A recorder's command line (``ENV_FILE OUT.jsonl``): log in, run ``steps`` in order, close the recording."""
    recorder = recorder_class(read_env(Path(argv[0])), Path(argv[1]))
    recorder.login()
    for step in steps:
        step(recorder)
    recorder.out.close()
    return 0


if __name__ == "__main__":
    sys.exit(record(sys.argv[1:], Recorder, Recorder.ties, Recorder.feed))
