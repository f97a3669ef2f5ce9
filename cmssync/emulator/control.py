"""``/__emulator/*``: endpoints that exist only in the emulator (never subject to faults, never counted).

* ``GET /__emulator/info`` — dialect, API prefix, seed, credentials of the sandbox.
* ``GET|POST|DELETE /__emulator/faults`` — show, add (``{"rules": [...], "seed": N, "replace": false,
  "latency_ms": N}``) or clear the fault rules.
* ``GET|DELETE /__emulator/stats`` — request counts by method, route template and status (``?reset=1`` clears after
  reading). Routes are the API templates (``/pages/{pageID}``), ``/oauth/2.0/token``, ``(page)`` for public pages
  and ``(unrouted)``; status 0 means the connection was dropped by a fault.
* ``POST /__emulator/reset`` — reseed (``{"seed": "default"|"empty"|PATH, "generate": "...", "dialect": "..."}``,
  all optional: the current seed and dialect are kept, nothing is generated unless ``generate`` says so); clears
  faults, stats and tokens.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from cmssync.emulator.faults import FaultRuleError
from cmssync.emulator.runtime import Emulator


def _emu(request: Request) -> Emulator:
    emu: Emulator = request.app.state.emulator
    return emu


async def _json(request: Request) -> dict[str, Any]:
    body = await request.body()
    if not body.strip():
        return {}
    data = json.loads(body)
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object")
    return data


def _bad(message: str) -> Response:
    return JSONResponse({"error": message}, status_code=400)


async def info(request: Request) -> Response:
    emu = _emu(request)
    return JSONResponse(
        {
            "dialect": emu.dialect,
            "api_prefix": emu.api_prefix,
            "seed": emu.seed,
            "generate": emu.generate,
            "client_id": emu.settings.client_id,
            "client_secret": emu.settings.client_secret,
            "admin_username": emu.settings.admin_username,
            "admin_password": emu.settings.admin_password,
            "token_ttl": emu.settings.token_ttl,
        }
    )


async def faults(request: Request) -> Response:
    emu = _emu(request)
    if request.method == "DELETE":
        emu.faults.clear()
    elif request.method == "POST":
        try:
            data = await _json(request)
            rules = data.get("rules", [data["rule"]] if "rule" in data else [])
            if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
                return _bad("rules must be a list of strings")
            seed = data.get("seed")
            emu.faults.set_rules(rules, None if seed is None else int(seed), replace=bool(data.get("replace", False)))
            if "latency_ms" in data:
                emu.faults.latency_ms = max(0, int(data["latency_ms"]))
        except (ValueError, FaultRuleError, TypeError) as exc:
            return _bad(str(exc))
    return JSONResponse(emu.faults.describe())


async def stats(request: Request) -> Response:
    emu = _emu(request)
    snapshot = emu.stats.snapshot()
    if emu.capacity.enabled:
        snapshot["capacity"] = emu.capacity.describe()
    if request.method == "DELETE" or request.query_params.get("reset") in ("1", "true"):
        emu.stats.clear()
    return JSONResponse(snapshot)


async def reset(request: Request) -> Response:
    emu = _emu(request)
    try:
        data = await _json(request)
        seed = str(data.get("seed", emu.seed))
        # "generate" is never kept from before: a reset to a seed gives exactly that seed unless asked otherwise.
        generate = data.get("generate")
        dialect = data.get("dialect", emu.dialect)
        emu.reseed(seed, str(generate) if generate else None, str(dialect))
    except (ValueError, TypeError) as exc:
        return _bad(str(exc))
    emu.faults.clear()
    emu.stats.clear()
    return JSONResponse(
        {"seed": emu.seed, "generate": emu.generate, "dialect": emu.dialect, "api_prefix": emu.api_prefix}
    )


ROUTES = [
    Route("/__emulator/info", info, methods=["GET"]),
    Route("/__emulator/faults", faults, methods=["GET", "POST", "DELETE"]),
    Route("/__emulator/stats", stats, methods=["GET", "DELETE"]),
    Route("/__emulator/reset", reset, methods=["POST"]),
]
