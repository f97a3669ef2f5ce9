"""One pull request (GitHub, Gitea) or merge request (GitLab) per proposal branch, through the forge's REST API.

:func:`open_pull_request` looks for an open request from the branch into ``base``; one found is updated (title and
description: the latest changes), else one is opened. Only the documented endpoints are used:

* GitHub: ``GET /repos/{owner}/{repo}/pulls?head={owner}:{branch}&base=…&state=open``, ``POST …/pulls``,
  ``PATCH …/pulls/{number}`` (``Authorization: Bearer``; ``html_url``);
* GitLab: ``GET /projects/{id}/merge_requests?source_branch=…&target_branch=…&state=opened``, ``POST``, ``PUT
  …/merge_requests/{iid}`` (``PRIVATE-TOKEN``; ``web_url``; the project's path URL-encoded as its id);
* Gitea: ``GET /repos/{owner}/{repo}/pulls?state=open`` (filtered by ``head.ref`` and ``base.ref``), ``POST``,
  ``PATCH …/pulls/{index}`` (``Authorization: token``; ``html_url``).

The token is registered as a secret (never in a message or a log); a refusal is a :class:`ForgeError` with the
status and the forge's own ``message``. This talks to the forge only, never to the site (``cmssync.api`` does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from cmssync.config import ForgeSettings
from cmssync.errors import CmsSyncError
from cmssync.secrets import register_secret

DEFAULT_API = {"github": "https://api.github.com", "gitlab": "https://gitlab.com/api/v4"}
TIMEOUT = 30.0


class ForgeError(CmsSyncError):
    """The forge refused or could not be reached; the message names the request and the forge's reason."""

    temporary = True


@dataclass(frozen=True)
class _Dialect:
    """Where each forge keeps its pull requests and what it calls their fields."""

    collection: str
    number: str
    url: str
    body: str
    update: str

    def found(self, items: Any, branch: str, base: str) -> dict[str, Any] | None:
        for item in items if isinstance(items, list) else []:
            head = item.get("head") if isinstance(item.get("head"), dict) else {}
            base_ref = item.get("base") if isinstance(item.get("base"), dict) else {}
            ref = item.get("source_branch", head.get("ref"))
            target = item.get("target_branch", base_ref.get("ref"))
            if ref == branch and target in (base, None):
                return item  # type: ignore[no-any-return]
        return None


def _dialect(forge: ForgeSettings) -> _Dialect:
    if forge.type == "gitlab":
        project = quote(forge.repository, safe="")
        return _Dialect(f"/projects/{project}/merge_requests", "iid", "web_url", "description", "PUT")
    return _Dialect(f"/repos/{forge.repository}/pulls", "number", "html_url", "body", "PATCH")


def _query(forge: ForgeSettings, branch: str) -> dict[str, str]:
    if forge.type == "github":
        owner = forge.repository.split("/", 1)[0]
        return {"head": f"{owner}:{branch}", "base": forge.base, "state": "open"}
    if forge.type == "gitlab":
        return {"source_branch": branch, "target_branch": forge.base, "state": "opened"}
    return {"state": "open"}


def _headers(forge: ForgeSettings, token: str) -> dict[str, str]:
    if forge.type == "github":
        return {
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
        }
    if forge.type == "gitlab":
        return {"PRIVATE-TOKEN": token}
    return {"Authorization": f"token {token}"}


async def open_pull_request(
    forge: ForgeSettings, branch: str, title: str, body: str, *, transport: httpx.AsyncBaseTransport | None = None
) -> str:
    """The address of the open pull request from ``branch`` into ``forge.base``, updated to ``title`` and
    ``body``, or of the one opened now."""
    if forge.token is None:
        raise ForgeError(f"proposals.forge: no token for {forge.type}; set token: ${{env:NAME}}")
    token = forge.token.get_secret_value()
    register_secret(token)
    api = (forge.url or DEFAULT_API.get(forge.type) or "").rstrip("/")
    if not api:
        raise ForgeError(f"proposals.forge: {forge.type} needs url (its API's address, e.g. https://host/api/v1)")
    dialect = _dialect(forge)
    text = {"title": title, dialect.body: body}
    async with httpx.AsyncClient(
        base_url=api, headers=_headers(forge, token), timeout=TIMEOUT, transport=transport, follow_redirects=False
    ) as client:
        listed = await _call(client, "GET", dialect.collection, params=_query(forge, branch))
        existing = dialect.found(listed, branch, forge.base)
        if existing is not None:
            updated = await _call(client, dialect.update, f"{dialect.collection}/{existing[dialect.number]}", json=text)
            return str(updated.get(dialect.url) or existing.get(dialect.url) or "")
        fields = (
            {"source_branch": branch, "target_branch": forge.base}
            if forge.type == "gitlab"
            else {"head": branch, "base": forge.base}
        )
        created = await _call(client, "POST", dialect.collection, json={**fields, **text})
        return str(created.get(dialect.url) or "")


async def _call(client: httpx.AsyncClient, method: str, path: str, **options: Any) -> Any:
    where = f"{method} {client.base_url.join(path).copy_with(query=None)}"
    try:
        response = await client.request(method, path, **options)
    except httpx.HTTPError as exc:
        raise ForgeError(f"{where}: {type(exc).__name__}") from exc
    if response.status_code >= 300:
        raise ForgeError(f"{where} answered {response.status_code}: {_reason(response)}")
    try:
        return response.json()
    except ValueError as exc:
        raise ForgeError(f"{where} answered {response.status_code} with no JSON") from exc


def _reason(response: httpx.Response) -> str:
    try:
        document = response.json()
    except ValueError:
        return response.text[:200] or response.reason_phrase
    if isinstance(document, dict):
        message = document.get("message") or document.get("error") or document
        errors = document.get("errors")
        return f"{message}" + (f" ({errors})" if errors else "")
    return str(document)[:200]
