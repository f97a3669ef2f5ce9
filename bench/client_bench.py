"""Client CPU per request: cmssync's real HTTP client against a sandbox running in another process.

The sandbox (``bench/emulator_bench.py``'s ``start_server``: ``run_emulator`` in a child process, ``--generate``
site, no latency) serves a site of 1,000 pages × 5 content blocks; the pages of the first section are given three
attributes (and approved) so that their reads carry areas, blocks and attributes. Each measurement runs in a fresh
**worker process** (``--worker``) that imports cmssync from a given checkout, opens a ``ConcreteClient`` (password
grant, fixed concurrency 8), warms up (token, connections, imports), and then sends each kind of request from 8
tasks at once (8 in flight):

* ``small page``: ``get_page(id)`` of a generated page (about 350 bytes);
* ``page + areas/attrs``: ``get_page(id, includes=("areas", "custom_attributes"))``: 5 blocks, 3 attributes;
* ``children (10 pages)``: ``page_children(id, includes=("areas", "custom_attributes"))`` of a parent with 10
  such children (the batched read of observation);
* ``block PUT``: ``update_block(page, "Main", block, value=…)`` (a draft write; the answer carries the block).

The figure is the worker's process CPU time (``time.process_time``: user + system, all threads) over the requests of
one kind, divided by their number. The sandbox's CPU is not in it (another process), nor is the worker's start.
``--base REV`` also measures the code of commit ``REV`` (checked out once with ``git worktree add`` under /tmp) and
prints it beside the working tree's; the workers of both alternate, round after round, and the median round of each
is reported, so both see the same machine load.

``--after REV`` measures a commit (or a checkout's directory) instead of the working tree, which other work in
progress may break.

Usage: ``python -m bench.client_bench [--base REV] [--after REV] [--requests 2000] [--rounds 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent

PAGES = 1000
BLOCKS = 5
SECTION = 2
"""The first generated section: its 99 children get attributes (ids 3–101)."""
SMALL_PARENT_CHILDREN = 10
CONCURRENCY = 8
KINDS = ("small page", "page + areas/attrs", "children (10 pages)", "block PUT")
SCOPES = "pages:read pages:add pages:update pages:versions:update pages:areas:add_block pages:areas:update_block"
ATTRIBUTES = {"meta_title": "Bench title", "meta_description": "A page read by the client benchmark.", "exclude_nav": 1}


# -- the sandbox's site ---------------------------------------------------------------------------------------------


def token(http: httpx.Client) -> str:
    form = {
        "grant_type": "password",
        "client_id": "sandbox",
        "client_secret": "sandbox-secret",
        "username": "admin",
        "password": "sandbox-admin",
        "scope": SCOPES,
    }
    answer = http.post("/oauth/2.0/token", data=form)
    answer.raise_for_status()
    return str(answer.json()["access_token"])


def prepare_site(url: str) -> int:
    """Attributes on the first section's pages; a parent with 10 children like them. Returns that parent's id."""
    with httpx.Client(base_url=url, timeout=60.0) as http:
        http.headers["Authorization"] = f"Bearer {token(http)}"
        api = "/ccm/api/1.0"

        def publish(page_id: int, fields: dict[str, Any]) -> None:
            answer = http.put(f"{api}/pages/{page_id}", json=fields)
            answer.raise_for_status()
            version = answer.json()["data"]["version"]["data"]["id"]
            http.put(f"{api}/page_versions/{page_id}/{version}", json={"is_approved": True}).raise_for_status()

        for page_id in range(SECTION + 1, SECTION + 100):
            publish(page_id, {"attributes": ATTRIBUTES})
        parent = http.post(
            f"{api}/pages", json={"parent": 1, "name": "Bench parent", "type": "page", "template": "full"}
        )
        parent.raise_for_status()
        parent_id = int(parent.json()["data"]["id"])
        for n in range(SMALL_PARENT_CHILDREN):
            child = http.post(
                f"{api}/pages", json={"parent": parent_id, "name": f"Child {n}", "type": "page", "template": "full"}
            )
            child.raise_for_status()
            child_id = int(child.json()["data"]["id"])
            for b in range(BLOCKS):
                block = {"type": "content", "value": {"content": f"<p>Block {b + 1} of child {n}.</p>"}}
                http.post(f"{api}/pages/{child_id}/Main", json=block).raise_for_status()
            publish(child_id, {"attributes": ATTRIBUTES})
        return parent_id


# -- one worker process: the client under measurement -----------------------------------------------------------


async def measure(url: str, requests: int, parent_id: int) -> dict[str, Any]:
    import cmssync
    from cmssync.api.auth import OAuthTokens
    from cmssync.api.client import ConcreteClient
    from cmssync.logs import configure_logging

    configure_logging(level=logging.INFO, json_lines=True)  # as the command line sets it up without --debug

    auth = OAuthTokens(
        token_url=url + "/oauth/2.0/token",
        grant="password",
        client_id="sandbox",
        client_secret="sandbox-secret",
        username="admin",
        password="sandbox-admin",
    )
    rng = random.Random(17)
    rich_pages = list(range(SECTION + 1, SECTION + 100))
    results: dict[str, Any] = {"cmssync": str(Path(cmssync.__file__).parent)}
    async with ConcreteClient(url, auth=auth, concurrency=CONCURRENCY) as client:
        # Blocks to update, one page per task (a draft per page; each task follows its block's new id).
        pages = [
            await client.get_page(page_id, includes=("areas",), version="recent")
            for page_id in rich_pages[:CONCURRENCY]
        ]
        blocks = [(page.id, page.areas[0].blocks[0].id) for page in pages if page.areas]

        async def small(task: int) -> None:
            await client.get_page(rng.randint(SECTION + 101, PAGES))

        async def rich(task: int) -> None:
            await client.get_page(rng.choice(rich_pages), includes=("areas", "custom_attributes"))

        async def children(task: int) -> None:
            await client.page_children(parent_id, includes=("areas", "custom_attributes"))

        async def put(task: int) -> None:
            page_id, block_id = blocks[task]
            value = {"content": f"<p>Edited {rng.random()}</p>"}
            block = await client.update_block(page_id, "Main", block_id, value=value)
            blocks[task] = (page_id, block.id)

        async def run(call: Any, count: int) -> tuple[float, float]:
            remaining = count

            async def task(n: int) -> None:
                nonlocal remaining
                while remaining > 0:
                    remaining -= 1
                    await call(n)

            cpu, wall = time.process_time(), time.perf_counter()
            await asyncio.gather(*(task(n) for n in range(CONCURRENCY)))
            return time.process_time() - cpu, time.perf_counter() - wall

        calls = {KINDS[0]: small, KINDS[1]: rich, KINDS[2]: children, KINDS[3]: put}
        for call in calls.values():
            await run(call, 50)  # warm-up: code paths, connections, caches
        for kind, call in calls.items():
            count = requests // 4 if kind == KINDS[2] else requests
            total = client.stats.total
            cpu, wall = await run(call, count)
            results[kind] = {"requests": client.stats.total - total, "cpu_s": cpu, "wall_s": wall}
    return results


# -- the driver -----------------------------------------------------------------------------------------------------


def checkout(rev: str) -> Path:
    """A worktree of ``rev`` under /tmp, made once (``rev`` may also name a checkout's directory)."""
    if (Path(rev) / "cmssync").is_dir():
        return Path(rev).resolve()
    sha = subprocess.run(["git", "rev-parse", rev], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    path = Path("/tmp") / f"cmssync-client-bench-{sha[:10]}"
    if not (path / "cmssync").is_dir():
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(path), sha], cwd=REPO, check=True, capture_output=True
        )
    return path


def run_worker(code: Path, url: str, requests: int, parent_id: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    args = [sys.executable, str(BENCH / "client_bench.py"), "--worker", url, "--requests", str(requests)]
    out = subprocess.run([*args, "--parent", str(parent_id)], env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"worker for {code} failed:\n{out.stderr}")
    result: dict[str, Any] = json.loads(out.stdout.splitlines()[-1])  # the last line (the client may log above it)
    if Path(result["cmssync"]).resolve() != (code / "cmssync").resolve():
        raise SystemExit(f"worker imported {result['cmssync']}, not {code}/cmssync")
    return result


def per_request_ms(rounds: list[dict[str, Any]], kind: str, field: str = "cpu_s") -> float:
    return float(statistics.median(r[kind][field] / r[kind]["requests"] * 1000 for r in rounds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="also measure this commit (a git worktree under /tmp), side by side")
    parser.add_argument(
        "--after",
        help="measure this commit (a git worktree under /tmp) or checkout directory instead of the working tree",
    )
    parser.add_argument("--requests", type=int, default=2000, help="requests per kind (a quarter for children)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--parent", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(asyncio.run(measure(args.worker, args.requests, args.parent))))
        return

    # The driver's own imports (a worker runs this file alone and imports only cmssync, from its checkout).
    from bench.common import table
    from bench.emulator_bench import start_server, stop_server

    codes = {"after": checkout(args.after) if args.after else REPO}
    if args.base:
        codes = {"before": checkout(args.base), **codes}
    process, url, _ = start_server(PAGES, BLOCKS)
    try:
        parent_id = prepare_site(url)
        rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in codes}
        for _ in range(args.rounds):
            for name, code in codes.items():
                rounds[name].append(run_worker(code, url, args.requests, parent_id))
    finally:
        stop_server(process)

    print(
        f"client CPU per request (ms), median of {args.rounds} rounds; concurrency {CONCURRENCY}; "
        f"sandbox in another process at {url}; {args.requests} requests per kind ({args.requests // 4} children reads)"
    )
    for name, code in codes.items():
        rev = args.base if name == "before" else args.after
        print(f"  {name}: {code} ({rev or 'working tree'})")
    headers = ["request", *(f"{name} ms CPU" for name in codes), *(f"{name} ms wall" for name in codes)]
    rows = []
    for kind in KINDS:
        cpu = [f"{per_request_ms(rounds[name], kind):.3f}" for name in codes]
        wall = [f"{per_request_ms(rounds[name], kind, 'wall_s'):.3f}" for name in codes]
        rows.append([kind, *cpu, *wall])
    if "before" in codes:
        headers.append("CPU change")
        for row, kind in zip(rows, KINDS, strict=True):
            before, after = per_request_ms(rounds["before"], kind), per_request_ms(rounds["after"], kind)
            row.append(f"{(after - before) / before:+.0%}")
    print(table(headers, rows))


if __name__ == "__main__":
    main()
