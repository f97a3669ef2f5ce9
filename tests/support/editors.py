"""People working on the sandbox's live site through the REST API, as the dashboard would: page fields and blocks
(:class:`Editor`), users and files (:class:`AccountEditor`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from cmssync.emulator.embedded import Sandbox
from tests.support.rawsite import RawSite
from tests.support.tokens import sandbox_token


class Editor:
    """Someone working on the live site: page fields and blocks changed, approved or left as a draft."""

    SCOPES = (
        "pages:read pages:update pages:areas:update_block pages:areas:delete_block pages:areas:add_block "
        "pages:versions:read pages:versions:update"
    )

    def __init__(self, sandbox: Sandbox) -> None:
        token = sandbox_token(sandbox, self.SCOPES)
        self.http = httpx.Client(base_url=sandbox.api_url, headers={"Authorization": f"Bearer {token}"}, timeout=10)
        self.reader = RawSite(sandbox)

    def page(self, path: str) -> dict[str, Any]:
        page = self.reader.page_by_path(path)
        assert page is not None, path
        return page

    def edit(self, path: str, *, approve: bool = True, **fields: Any) -> int:
        page = self.page(path)
        self.http.put(f"/pages/{page['id']}", json=fields).raise_for_status()
        return self._newest(page["id"], approve)

    def edit_block(
        self, path: str, area: str, index: int, html: str, *, approve: bool = True, page_id: int | None = None
    ) -> int:
        """Change the ``index``-th block of ``area``; ``page_id`` reads the page by id (a stack is in no tree)."""
        page = self.page(path) if page_id is None else self.reader.get(f"/pages/{page_id}", includes="areas")
        areas = page["areas"]["data"] if isinstance(page["areas"], dict) else page["areas"]
        blocks = next(a["blocks"] for a in areas if a["name"] == area)
        block = (blocks["data"] if isinstance(blocks, dict) else blocks)[index]
        self.http.put(f"/pages/{page['id']}/{area}/{block['id']}", json={"value": {"content": html}}).raise_for_status()
        return self._newest(page["id"], approve)

    def remove_block(self, path: str, area: str, block_id: int, *, approve: bool = True) -> int:
        page = self.page(path)
        self.http.delete(f"/pages/{page['id']}/{quote(area, safe='')}/{block_id}").raise_for_status()
        return self._newest(page["id"], approve)

    def add_block(self, path: str, area: str, html: str, *, approve: bool = True) -> int:
        """Append a content block to ``area``, as an editor does in the page editor."""
        page = self.page(path)
        body = {"type": "content", "value": {"content": html}}
        self.http.post(f"/pages/{page['id']}/{area}", json=body).raise_for_status()
        return self._newest(page["id"], approve)

    def _newest(self, page_id: int, approve: bool) -> int:
        newest = self.reader.get(f"/page_versions/{page_id}")[0]
        if approve:
            self.http.put(f"/page_versions/{page_id}/{newest['id']}", json={"is_approved": True}).raise_for_status()
        return int(newest["id"])

    def live(self, path: str) -> dict[str, Any]:
        return self.page(path)

    def close(self) -> None:
        self.http.close()
        self.reader.close()


class AccountEditor:
    """Someone changing users and files on the live site."""

    SCOPES = "users:read users:update files:read files:update"

    def __init__(self, sandbox: Sandbox) -> None:
        token = sandbox_token(sandbox, self.SCOPES)
        self.http = httpx.Client(base_url=sandbox.api_url, headers={"Authorization": f"Bearer {token}"}, timeout=10)
        self.reader = RawSite(sandbox)

    def user(self, username: str) -> dict[str, Any]:
        return next(u for u in self.reader.all("/users") if u["username"] == username)

    def edit_user(self, username: str, **fields: Any) -> None:
        self.http.put(f"/users/{self.user(username)['id']}", json=fields).raise_for_status()

    def file(self, file_id: str) -> dict[str, Any]:
        return dict(self.reader.get(f"/files/{file_id}"))

    def edit_file(self, file_id: str, **fields: Any) -> None:
        self.http.put(f"/files/{file_id}", json=fields).raise_for_status()

    def close(self) -> None:
        self.http.close()
        self.reader.close()
