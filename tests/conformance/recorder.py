"""Recording exchanges with a real Concrete site as JSONL, in the line format of
``shared/conformance/concrete-9.3.1/README.md``.

Only HTTP: the recorder logs in with the password grant (all scopes, as cmssync does), sends each request, and
writes one line per exchange — the request as sent (secrets and tokens redacted to ``<client_id>``,
``<client_secret>``, ``<admin_password>``, ``<token:STEP:access_token>``) and the response (status, content type,
the headers the replay compares, the JSON body as parsed plus its raw text when short). Public pages are recorded by
facts: the ``<title>`` and, for each marker the scenario names, how many times it occurs in the HTML
(``markers``), so a replay can check that a change shows (or does not show) on the page without comparing a
theme's markup.

The scenarios are ``record_subareas.py`` and ``record_stacks.py``; run one against a freshly reset site::

    python -m tests.conformance.record_subareas --env /tmp/site-areas.env \\
        --out tests/conformance/concrete-9.3.1/subareas.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

PREFIX = "/ccm/api/1.0"
SCOPES = (
    "account:read system:info:read sites:read files:read files:add files:update files:delete pages:read pages:add "
    "pages:update pages:delete pages:areas:add_block pages:areas:update_block pages:areas:delete_block "
    "pages:versions:read pages:versions:update pages:versions:delete blocks:read blocks:delete users:read users:add "
    "users:update users:delete groups:read groups:add"
)
_KEPT_HEADERS = ("content-type", "cache-control", "pragma", "www-authenticate", "retry-after", "location", "allow")
_TEXT_LIMIT = 2000
_STRING_LIMIT = 3000


def read_env(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` lines of the env file ``shared/realsite/up.sh`` writes."""
    values: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, _, raw = line.partition("=")
            parts = shlex.split(raw, comments=True)
            values[key.strip()] = " ".join(parts)
    return values


def area_path(page_id: int, area: str, block_id: int | None = None) -> str:
    """``/pages/{id}/{area}[/{block}]`` with the area handle escaped (sub-area handles hold spaces and colons)."""
    path = f"{PREFIX}/pages/{page_id}/{quote(area, safe='')}"
    return path if block_id is None else f"{path}/{block_id}"


class Recorder:
    """Sends requests to the site and appends each exchange to ``out`` as one JSON line."""

    def __init__(self, env: Mapping[str, str], out: Path, scenario: str) -> None:
        self.base = env["CONCRETE_BASE"].rstrip("/")
        self.secrets = {
            env["CONCRETE_CLIENT_SECRET"]: "<client_secret>",
            env["CONCRETE_CLIENT_ID"]: "<client_id>",
            env["CONCRETE_ADMIN_PASSWORD"]: "<admin_password>",
        }
        self.client_id = env["CONCRETE_CLIENT_ID"]
        self.client_secret = env["CONCRETE_CLIENT_SECRET"]
        self.password = env["CONCRETE_ADMIN_PASSWORD"]
        self.scenario = scenario
        self.out = out.open("w", encoding="utf-8")
        self.http = httpx.Client(base_url=self.base, timeout=120.0)
        self.seq = 0
        self.tokens: dict[str, str] = {}
        self.token = ""

    def close(self) -> None:
        self.out.close()
        self.http.close()

    # --- requests --------------------------------------------------------------------------------------------------

    def login(self, step: str) -> None:
        """A password-grant token with every scope; later API calls carry it."""
        form = {
            "grant_type": "password",
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "username": "admin",
            "password": self.password,
            "scope": SCOPES,
        }
        response = self.send(step, "POST", "/oauth/2.0/token", form=form, auth=False)
        body = response.json()
        self.tokens[body["access_token"]] = f"<token:{step}:access_token>"
        if "refresh_token" in body:
            self.tokens[body["refresh_token"]] = f"<token:{step}:refresh_token>"
        self.token = body["access_token"]

    def api(
        self,
        step: str,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | None = None,
        json_body: Any = None,
        note: str | None = None,
    ) -> Any:
        """An API call (``path`` after the prefix, or a full path from :func:`area_path`); the parsed body."""
        full = path if path.startswith(PREFIX) else PREFIX + path
        response = self.send(step, method, full, query=query, json_body=json_body, note=note)
        try:
            return response.json()
        except ValueError:
            return None

    def approve(self, step: str, page_id: int) -> None:
        """Publish the page's newest version (``STEP.versions`` lists them, ``STEP`` approves)."""
        versions = data(self.api(f"{step}.versions", "GET", f"/page_versions/{page_id}"))
        self.api(step, "PUT", f"/page_versions/{page_id}/{versions[0]['id']}", json_body={"is_approved": True})

    def public(self, step: str, path: str, markers: Mapping[str, str], *, note: str | None = None) -> dict[str, int]:
        """A guest read of a public page; ``markers`` (name → literal text) are counted in its HTML."""
        response = self.http.get(path, headers={"accept": "text/html"})
        counts = {name: response.text.count(text) for name, text in markers.items()}
        title = re.search(r"<title>(.*?)</title>", response.text, re.DOTALL)
        recorded = {
            "status": response.status_code,
            "content_type": response.headers.get("content-type"),
            "headers": self._headers(response),
            "body": "\n".join(f"[{name}] x{count}" for name, count in counts.items()),
            "body_length": len(response.text),
            "html": {"title": title.group(1).strip()} if title else {},
            "markers": {name: {"text": markers[name], "count": count} for name, count in counts.items()},
        }
        request = {"method": "GET", "path": path, "query": None, "headers": {"accept": "text/html"}}
        self._write(step, {**request, "content_type": None, "body": None}, recorded, 0, note)
        return counts

    def send(
        self,
        step: str,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | None = None,
        json_body: Any = None,
        form: Mapping[str, str] | None = None,
        auth: bool = True,
        note: str | None = None,
    ) -> httpx.Response:
        headers = {"accept": "application/json"}
        if auth:
            headers["authorization"] = f"Bearer {self.token}"
        started = time.monotonic()
        if form is not None:
            response = self.http.request(method, path, params=query, data=dict(form), headers=headers)
            body: Any = {"form": dict(form)}
            content_type: str | None = "application/x-www-form-urlencoded"
        elif json_body is not None:
            response = self.http.request(method, path, params=query, json=json_body, headers=headers)
            body, content_type = {"json": json_body}, "application/json"
        else:
            response = self.http.request(method, path, params=query, headers=headers)
            body, content_type = None, None
        elapsed = int((time.monotonic() - started) * 1000)
        sent_headers = {"authorization": f"Bearer {self.token}"} if auth else None
        request = {
            "method": method,
            "path": path,
            "query": dict(query) if query else None,
            "headers": sent_headers,
            "content_type": content_type,
            "body": body,
        }
        self._write(step, request, self._response(response), elapsed, note)
        return response

    # --- the line --------------------------------------------------------------------------------------------------

    def _headers(self, response: httpx.Response) -> dict[str, str]:
        return {name: response.headers[name] for name in _KEPT_HEADERS if name in response.headers}

    def _response(self, response: httpx.Response) -> dict[str, Any]:
        recorded: dict[str, Any] = {
            "status": response.status_code,
            "content_type": response.headers.get("content-type"),
            "headers": self._headers(response),
        }
        cookies = sorted({c.split("=", 1)[0] for c in response.headers.get_list("set-cookie")})
        if cookies:
            recorded["set_cookie_names"] = cookies
        text = response.text
        try:
            parsed = response.json()
        except ValueError:
            recorded["body"] = text[:_TEXT_LIMIT]
            recorded["body_length"] = len(text)
            title = re.search(r"<title>(.*?)</title>", text, re.DOTALL)
            if title:
                recorded["html"] = {"title": title.group(1).strip()}
            return recorded
        recorded["body"] = _cut(parsed)
        if len(text) <= _TEXT_LIMIT:
            recorded["body_raw"] = text
        else:
            recorded["body_raw_length"] = len(text)
        return recorded

    def _redact(self, value: Any) -> Any:
        if isinstance(value, str):
            for secret, placeholder in {**self.secrets, **self.tokens}.items():
                value = value.replace(secret, placeholder)
            return value
        if isinstance(value, list):
            return [self._redact(v) for v in value]
        if isinstance(value, dict):
            return {k: self._redact(v) for k, v in value.items()}
        return value

    def _write(
        self, step: str, request: dict[str, Any], response: dict[str, Any], elapsed: int, note: str | None
    ) -> None:
        self.seq += 1
        line: dict[str, Any] = {"seq": self.seq, "scenario": self.scenario, "step": step}
        if note:
            line["note"] = note
        line.update(request=self._redact(request), response=self._redact(response), elapsed_ms=elapsed)
        self.out.write(json.dumps(line, ensure_ascii=False) + "\n")
        self.out.flush()


def _cut(value: Any) -> Any:
    """Long strings (rendered HTML) cut as the shared recordings cut them."""
    if isinstance(value, str) and len(value) > _STRING_LIMIT:
        return value[:_STRING_LIMIT] + f"...[truncated, {len(value)} chars in total]"
    if isinstance(value, list):
        return [_cut(v) for v in value]
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items()}
    return value


def arguments(description: str, default_out: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--env", type=Path, required=True, help="the env file shared/realsite/up.sh wrote")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "concrete-9.3.1" / default_out)
    return parser.parse_args()


def data(body: Any) -> Any:
    """The ``data`` of an answer (the envelope removed)."""
    return body["data"] if isinstance(body, dict) and "data" in body else body


def areas_of(page: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Area name → its blocks, from a page read with ``includes=areas``."""
    return {area["name"]: area["blocks"]["data"] for area in page.get("areas", {}).get("data", [])}
