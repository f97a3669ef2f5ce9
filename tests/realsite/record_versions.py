"""Record what the real site says about who wrote and who approved a page version: ``python -m
tests.realsite.record_versions ENV_FILE OUT`` (OUT: ``tests/conformance/concrete-9.3.1/versions.jsonl``).

Opt-in, against a freshly reset real Concrete 9.3.1 site of ``../shared/realsite/``. Scenario ``authors``: a second
user (``editor_jane``, put in the Administrators group through the database, as a site owner would in the dashboard)
edits a content block of ``/about`` through the API (a page update of hers is recorded too: the real site answers
500 to anyone but the super admin), the admin approves that version; then every read that could name a version's
author or approver is recorded — ``GET /pages/{id}`` (its default ``version`` include), ``?version=recent``,
``?version={id}``, ``?includes=version.author,version.approver,author,approver``, ``GET /page_versions/{id}``,
``GET /page_versions/{id}/{version}`` with and without ``?includes=author,approver`` — each with a note naming the
version's author and approver as the database holds them (``CollectionVersions.cvAuthorUID``/``cvApproverUID``),
which is what the dashboard's version list shows and the API does not. Only HTTP, plus ``mysql`` for the group
membership and the notes (the env's ``CONCRETE_DB``).
"""

from __future__ import annotations

import sys
from typing import Any
from urllib.parse import quote

from tests.realsite.record_lists import PREFIX, SCOPES, Recorder, items_of, record

EDITOR = {"username": "editor_jane", "email": "jane.editor@example.com", "password": "editor-pw-12345"}
ADMINISTRATORS = 3  # the group id of a fresh install (concrete-api.md's transcript: Guest 1, Registered 2, Admins 3)


class VersionRecorder(Recorder):
    def login_as(self, username: str, password: str) -> str:
        form = {
            "grant_type": "password",
            "client_id": self.env["CONCRETE_CLIENT_ID"],
            "client_secret": self.env["CONCRETE_CLIENT_SECRET"],
            "username": username,
            "password": password,
            "scope": SCOPES,
        }
        answer = self.http.post("/oauth/2.0/token", data=form, headers={"Accept": "application/json"})
        answer.raise_for_status()
        return str(answer.json()["access_token"])

    def newest(self, page: int) -> int:
        versions = self.call("", "GET", f"{PREFIX}/page_versions/{page}").json()["data"]
        return max(int(v["id"]) for v in versions)

    def who(self, page: int) -> str:
        """The versions' authors and approvers as the database holds them (the dashboard shows these)."""
        rows = self.sql(
            "SELECT cv.cvID, cv.cvIsApproved, a.uName, COALESCE(p.uName, '-') FROM CollectionVersions cv "
            "LEFT JOIN Users a ON a.uID = cv.cvAuthorUID LEFT JOIN Users p ON p.uID = cv.cvApproverUID "
            f"WHERE cv.cID = {page} ORDER BY cv.cvID"
        )
        return "database: " + "; ".join(
            f"version {cv} approved={ok} author={author} approver={approver}" for cv, ok, author, approver in rows
        )

    def reads(self, page: int, version: int, what: str) -> None:
        note = f"{what}; {self.who(page)}"
        reads: list[tuple[str, str, dict[str, Any] | None]] = [
            ("page", f"{PREFIX}/pages/{page}", None),
            ("page.recent", f"{PREFIX}/pages/{page}", {"version": "recent"}),
            ("page.by_version", f"{PREFIX}/pages/{page}", {"version": str(version)}),
            (
                "page.author_includes",
                f"{PREFIX}/pages/{page}",
                {"version": "recent", "includes": "version.author,version.approver,author,approver"},
            ),
            ("versions", f"{PREFIX}/page_versions/{page}", None),
            ("versions.author_includes", f"{PREFIX}/page_versions/{page}", {"includes": "author,approver"}),
            ("version", f"{PREFIX}/page_versions/{page}/{version}", None),
            ("version.author_includes", f"{PREFIX}/page_versions/{page}/{version}", {"includes": "author,approver"}),
        ]
        for step, path, params in reads:
            self.call(f"{what}.{step}", "GET", path, params=params, note=note)

    def authors(self) -> None:
        self.scenario = "authors"
        admin_token = self.token
        created = self.call("setup.create_editor", "POST", f"{PREFIX}/users", json=EDITOR)
        created.raise_for_status()
        editor_id = int(created.json()["data"]["id"])
        self.sql(f"INSERT INTO UserGroups (uID, gID, grID, ugEntered) VALUES ({editor_id}, {ADMINISTRATORS}, 0, NOW())")
        children = self.call("", "GET", f"{PREFIX}/pages/1/children").json()["data"]
        page = next(int(p["id"]) for p in children if p["path"] == "/about")

        page_read = self.call("", "GET", f"{PREFIX}/pages/{page}", params={"includes": "areas"}).json()["data"]
        area = next(
            a for a in items_of(page_read["areas"]) if any(b["type"] == "content" for b in items_of(a["blocks"]))
        )
        block = next(b for b in items_of(area["blocks"]) if b["type"] == "content")
        route = f"{PREFIX}/pages/{page}/{quote(area['name'], safe='')}"

        self.token = self.login_as(EDITOR["username"], EDITOR["password"])
        self.call("editor.account", "GET", f"{PREFIX}/account", note="the token's user: the editor")
        self.call(
            "editor.put_page",
            "PUT",
            f"{PREFIX}/pages/{page}",
            json={"description": "Written by editor_jane."},
            note="a page update by a user who is not the super admin (an Administrators member)",
        )
        edit = {"value": {"content": "<p>Written by editor_jane.</p>"}}
        block_id = int(
            self.call("editor.update_block", "PUT", f"{route}/{block['id']}", json=edit).json()["data"]["id"]
        )
        draft = self.newest(page)
        self.reads(page, draft, "editor_draft")

        self.token = admin_token
        self.call("admin.approve", "PUT", f"{PREFIX}/page_versions/{page}/{draft}", json={"is_approved": True})
        self.reads(page, draft, "admin_approved")

        self.token = self.login_as(EDITOR["username"], EDITOR["password"])
        again = {"value": {"content": "<p>Written again by editor_jane.</p>"}}
        self.call("editor.update_block_again", "PUT", f"{route}/{block_id}", json=again)
        own = self.newest(page)
        self.call("editor.approve_own", "PUT", f"{PREFIX}/page_versions/{page}/{own}", json={"is_approved": True})
        self.reads(page, own, "editor_approved_own")
        self.token = admin_token


if __name__ == "__main__":
    sys.exit(record(sys.argv[1:], VersionRecorder, VersionRecorder.authors))
