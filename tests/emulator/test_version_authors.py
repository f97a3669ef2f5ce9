"""Who wrote and who approved a page version, as the sandbox shows it and as the real 9.3.1 site did in
``tests/conformance/concrete-9.3.1/versions.jsonl`` (recorded with ``tests/realsite/record_versions.py``).

The recording's notes give each version's author and approver from the site's database (an editor, the admin); its
answers name neither: a version reads as ``{id, is_approved, date_created, date_approved, publish_end_date}``
whichever read it comes from (a page's default ``version`` include, ``?version=recent``, ``?version=N``,
``/page_versions``), and ``includes=author,approver`` (or ``version.author``) is ignored. A user who is not the
super admin cannot update a page's fields (500, "Unable to get permission key for edit_page") but can update its
blocks and approve versions. The sandbox has no group permissions (only its super admin writes blocks or reads
versions), so its test makes the editor's edits and reads as the admin. The sandbox answers the same, so nothing
built on it (a proposal's commit message, a plan's draft note) can name an author the real API would not give.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from cmssync.emulator.embedded import Sandbox
from tests.support.tokens import sandbox_token

RECORDING = Path(__file__).resolve().parents[1] / "conformance" / "concrete-9.3.1" / "versions.jsonl"
SCOPES = (
    "pages:read pages:update pages:areas:update_block pages:versions:read pages:versions:update users:read users:add"
)
READS = (
    "page",
    "page.recent",
    "page.by_version",
    "page.author_includes",
    "versions",
    "versions.author_includes",
    "version",
    "version.author_includes",
)
STAGES = ("editor_draft", "admin_approved", "editor_approved_own")
EDITOR = {"username": "editor_jane", "email": "jane.editor@example.com", "password": "editor-pw-12345"}


def _steps() -> dict[str, dict[str, Any]]:
    lines = RECORDING.read_text(encoding="utf-8").splitlines()
    return {exchange["step"]: exchange for exchange in map(json.loads, lines)}


def _version_shapes(body: Any) -> list[list[str]]:
    """The keys of every version object in an answer (a page's ``version`` include, a list, one version)."""
    data = body["data"]
    if isinstance(data, list):
        return [list(item) for item in data]
    if "version" in data:
        return [list(data["version"]["data"])]
    return [list(data)]


def test_the_recording_names_authors_only_in_its_notes() -> None:
    steps = _steps()
    assert "author=editor_jane approver=admin" in steps["admin_approved.version"]["note"]
    for stage in STAGES:
        for read in READS:
            text = json.dumps(steps[f"{stage}.{read}"]["response"]["body"])
            for word in ("author", "approver", "editor_jane"):
                assert word not in text, (stage, read, word)


def test_versions_read_as_recorded_whoever_wrote_or_approved_them(sandbox: Sandbox) -> None:
    steps = _steps()
    sandbox.reset(seed="default", dialect="concrete")

    def client(token: str) -> httpx.Client:
        return httpx.Client(base_url=sandbox.api_url, headers={"Authorization": f"Bearer {token}"}, timeout=10)

    with client(sandbox_token(sandbox, SCOPES)) as admin:
        admin.post("/users", json=EDITOR).raise_for_status()
        editor = client(sandbox_token(sandbox, SCOPES, username=EDITOR["username"], password=EDITOR["password"]))
        page = next(p for p in admin.get("/pages/1/children").json()["data"] if p["path"] == "/about")
        page_id = int(page["id"])
        refused = editor.put(f"/pages/{page_id}", json={"description": "Written by editor_jane."})
        assert refused.status_code == steps["editor.put_page"]["response"]["status"] == 500
        assert "Unable to get permission key for edit_page" in refused.text
        assert "Unable to get permission key for edit_page" in steps["editor.put_page"]["response"]["body"]

        main = next(
            a for a in admin.get(f"/pages/{page_id}", params={"includes": "areas"}).json()["data"]["areas"]["data"]
        )
        block = main["blocks"]["data"][0]
        route = f"/pages/{page_id}/{main['name']}"
        edit = {"value": {"content": "<p>Written by editor_jane.</p>"}}
        # The sandbox knows no group permissions (only its super admin writes blocks or reads versions), so the
        # admin makes the edits and reads the recorded editor made.
        block_id = admin.put(f"{route}/{block['id']}", json=edit).json()["data"]["id"]
        _same_reads(admin, page_id, "editor_draft", steps)
        draft = max(int(v["id"]) for v in admin.get(f"/page_versions/{page_id}").json()["data"])
        admin.put(f"/page_versions/{page_id}/{draft}", json={"is_approved": True}).raise_for_status()
        _same_reads(admin, page_id, "admin_approved", steps)
        again = {"value": {"content": "<p>Written again by editor_jane.</p>"}}
        admin.put(f"{route}/{block_id}", json=again).raise_for_status()
        own = max(int(v["id"]) for v in admin.get(f"/page_versions/{page_id}").json()["data"])
        admin.put(f"/page_versions/{page_id}/{own}", json={"is_approved": True}).raise_for_status()
        _same_reads(admin, page_id, "editor_approved_own", steps)
        editor.close()


def _same_reads(http: httpx.Client, page_id: int, stage: str, steps: dict[str, dict[str, Any]]) -> None:
    versions = http.get(f"/page_versions/{page_id}").json()["data"]
    newest = max(int(v["id"]) for v in versions)
    for read in READS:
        recorded = steps[f"{stage}.{read}"]
        query = dict(recorded["request"]["query"] or {})
        if "version" in query and query["version"] != "recent":
            query["version"] = str(newest)
        path = f"/pages/{page_id}" if read.startswith("page") else f"/page_versions/{page_id}"
        if read == "version" or read.startswith("version."):
            path += f"/{newest}"
        answer = http.get(path, params=query)
        assert answer.status_code == recorded["response"]["status"], (stage, read, answer.text[:300])
        shapes = _version_shapes(answer.json())
        assert shapes[0] == _version_shapes(recorded["response"]["body"])[0], (stage, read)
        assert "author" not in answer.text, (stage, read)
        assert "approver" not in answer.text, (stage, read)
