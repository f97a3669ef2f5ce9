"""``RawSite``: plain HTTP reads of the sandbox with its own token, never through cmssync's client or observer,
so a bug there cannot hide a wrong site."""

from __future__ import annotations

from typing import Any

import httpx

from cmssync.emulator.embedded import Sandbox
from tests.support.tokens import sandbox_token


class RawSite:
    """Plain HTTP reads of the sandbox, independent of cmssync's client."""

    def __init__(self, sandbox: Sandbox) -> None:
        token = sandbox_token(sandbox)
        self.http = httpx.Client(base_url=sandbox.api_url, headers={"Authorization": f"Bearer {token}"})

    def get(self, path: str, **params: Any) -> Any:
        response = self.http.get(path, params=params)
        response.raise_for_status()
        body = response.json()
        return body["data"] if isinstance(body, dict) and set(body) <= {"data", "meta"} and "data" in body else body

    def page_by_path(self, path: str) -> dict[str, Any] | None:
        node = self.get("/pages/1")
        if path == "/":
            return self.get(f"/pages/{node['id']}", includes="areas,custom_attributes")
        for depth in range(1, path.count("/") + 1):
            prefix = "/" + "/".join(path.strip("/").split("/")[:depth])
            children = self.get(f"/pages/{node['id']}/children")
            node = next((c for c in children if c.get("path") == prefix), None)
            if node is None:
                return None
        return self.get(f"/pages/{node['id']}", includes="areas,custom_attributes")

    def blocks(self, path: str, area: str, *, page_id: int | None = None) -> list[tuple[str, dict[str, Any]]]:
        """The live blocks of ``area``; ``page_id`` reads the page by id (a stack is in no tree)."""
        page = self.page_by_path(path) if page_id is None else self.get(f"/pages/{page_id}", includes="areas")
        assert page is not None, f"no page at {path}"
        areas = page.get("areas") or []
        areas = areas["data"] if isinstance(areas, dict) else areas
        for found in areas:
            if found["name"] == area:
                blocks = found["blocks"]["data"] if isinstance(found["blocks"], dict) else found["blocks"]
                return [(b["type"], b["value"] or {}) for b in blocks]
        return []

    def all(self, path: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        seen: set[Any] = set()
        after: Any = None
        while True:
            params: dict[str, Any] = {"limit": 100}
            if after is not None:
                params["after"] = after
            page = self.get(path, **params)
            fresh = [item for item in page if item["id"] not in seen]
            if not fresh:
                return items
            seen.update(item["id"] for item in fresh)
            items += fresh
            after = fresh[-1]["id"]

    def close(self) -> None:
        self.http.close()


def trash_page(sandbox: Sandbox, path: str) -> int:
    """Move the page at ``path`` to the trash as an editor would (``DELETE /pages/{id}``); its id."""
    raw = RawSite(sandbox)
    page = raw.page_by_path(path)
    raw.close()
    assert page is not None
    token = sandbox_token(sandbox, "pages:read pages:delete")
    with httpx.Client(base_url=sandbox.api_url, headers={"Authorization": f"Bearer {token}"}) as editor:
        editor.delete(f"/pages/{page['id']}").raise_for_status()
    return int(page["id"])
