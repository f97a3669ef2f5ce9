"""A recorder of real HTTP exchanges in the line format of ``shared/conformance/concrete-9.3.1/README.md``.

Speaks only HTTP to the site (password grant, JSON API, guest GETs of public pages). Secrets and tokens are
redacted as that README says; public pages keep only an excerpt (``body_excerpt`` says which).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx

from cmssync.api.auth import DEFAULT_SCOPES
from tests.emulator.replay import html_facts

API = "/ccm/api/1.0"
_KEPT_HEADERS = ("content-type", "cache-control", "pragma", "www-authenticate", "retry-after", "location", "allow")


class Recorder:
    """Sends requests, writes one JSON line per exchange; ``call`` answers the parsed body."""

    def __init__(self, env: dict[str, str], out: Path, scenario: str) -> None:
        self.base = env["CONCRETE_BASE"].rstrip("/")
        self.env = env
        self.scenario = scenario
        self.out = out.open("w", encoding="utf-8")
        self.seq = 0
        self.http = httpx.Client(base_url=self.base, timeout=120, follow_redirects=False)
        self.token = ""
        self.token_step = ""
        self.secrets = {
            env["CONCRETE_CLIENT_SECRET"]: "<client_secret>",
            env["CONCRETE_ADMIN_PASSWORD"]: "<admin_password>",
            env["CONCRETE_CLIENT_ID"]: "<client_id>",
        }

    def close(self) -> None:
        self.out.close()
        self.http.close()

    def login(self, step: str) -> None:
        form = {
            "grant_type": "password",
            "client_id": self.env["CONCRETE_CLIENT_ID"],
            "client_secret": self.env["CONCRETE_CLIENT_SECRET"],
            "username": self.env["CONCRETE_ADMIN_USER"],
            "password": self.env["CONCRETE_ADMIN_PASSWORD"],
            "scope": " ".join(DEFAULT_SCOPES),
        }
        answer = self._send(step, "POST", "/oauth/2.0/token", form=form, auth=False)
        self.token = answer["access_token"]
        self.token_step = step

    def call(
        self, step: str, method: str, path: str, *, query: dict[str, Any] | None = None, json_body: Any = None,
        note: str | None = None,
    ) -> Any:
        return self._send(step, method, API + path, query=query, json_body=json_body, note=note)

    def public(self, step: str, path: str, excerpt: str, cut: Any, note: str | None = None) -> str:
        """A guest GET of a public page; ``cut(html)`` gives the fragment kept in ``body``."""
        started = time.monotonic()
        response = self.http.get(path, headers={"accept": "text/html"})
        text = response.text
        fragment = cut(text)
        self._write(
            step,
            {"method": "GET", "path": path, "query": None, "headers": {"accept": "text/html"},
             "content_type": None, "body": None},
            response,
            {"body": fragment, "body_excerpt": excerpt, "body_length": len(text), "html": _facts(text)},
            started,
            note,
        )
        return text

    # --- plumbing ----------------------------------------------------------------------------------------------

    def _send(
        self, step: str, method: str, path: str, *, query: dict[str, Any] | None = None, json_body: Any = None,
        form: dict[str, str] | None = None, auth: bool = True, note: str | None = None,
    ) -> Any:
        headers = {"accept": "application/json"}
        if auth:
            headers["authorization"] = f"Bearer {self.token}"
        started = time.monotonic()
        response = self.http.request(method, path, params=query, json=json_body, data=form, headers=headers)
        body: Any
        try:
            body = response.json()
        except ValueError:
            body = None
        request = {
            "method": method,
            "path": path,
            "query": {k: str(v) for k, v in query.items()} if query else None,
            "headers": {"authorization": f"Bearer <token:{self.token_step}:access_token>"} if auth else None,
            "content_type": "application/json" if json_body is not None else (
                "application/x-www-form-urlencoded" if form else None),
            "body": {"json": json_body} if json_body is not None else ({"form": form} if form else None),
        }
        shown: dict[str, Any] = {"body": body if body is not None else response.text[:2000]}
        if body is None:
            shown["body_length"] = len(response.text)
            shown["html"] = html_facts(response.text)
        if isinstance(body, dict) and "access_token" in body:
            shown["body"] = {k: (f"<token:{step}:{k}>" if k.endswith("_token") else v) for k, v in body.items()}
        self._write(step, request, response, shown, started, note)
        return body

    def _write(
        self, step: str, request: dict[str, Any], response: httpx.Response, shown: dict[str, Any], started: float,
        note: str | None,
    ) -> None:
        self.seq += 1
        line: dict[str, Any] = {"seq": self.seq, "scenario": self.scenario, "step": step}
        if note:
            line["note"] = note
        line["request"] = request
        line["response"] = {
            "status": response.status_code,
            "content_type": response.headers.get("content-type"),
            "headers": {k: response.headers[k] for k in _KEPT_HEADERS if k in response.headers},
            **shown,
        }
        line["elapsed_ms"] = round((time.monotonic() - started) * 1000)
        text = json.dumps(line, ensure_ascii=False)
        for secret, placeholder in self.secrets.items():
            text = text.replace(json.dumps(secret)[1:-1], placeholder)
        if self.token:
            text = text.replace(self.token, f"<token:{self.token_step}:access_token>")
        self.out.write(text + "\n")
        self.out.flush()


def _facts(text: str) -> dict[str, str]:
    """The page's ``<title>`` only: the first ``<h1>`` of a themed page is the theme's (blocks.jsonl allow-list)."""
    return {k: v for k, v in html_facts(text).items() if k == "title"}
