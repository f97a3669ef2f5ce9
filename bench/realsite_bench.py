"""Opt-in benchmark against a real Concrete 9.3.1 site: the cost of a no-op plan of 150 pages under 3 parents.

    python -m bench.realsite_bench [--env /tmp/concrete-site.env] [--parents 3] [--children 50] [--blocks 2]
                                   [--reset /work/shared/realsite/reset.sh] [--plans 3]
                                   [--baseline OLD_CHECKOUT] [--imports N] [--no-cleanup] [--keep DIR | --reuse DIR]

Needs the site of ``../shared/realsite/`` (``up.sh``) and its env file; without the env file it says so and exits
2. With ``--reset`` it first puts the site back to its reset point (the script given). It writes a content directory
of PARENTS top-level pages, each with CHILDREN child pages of BLOCKS content blocks, applies it with
``cmssync apply --yes`` (the create costs what it costs; its figures are printed too), then runs ``cmssync plan`` PLANS
times, verifying each is a no-op, and reports for each its wall time (the process, interpreter start and content
load included) and the requests it made, from its own log (``--debug --log-format json``: one ``api.request`` event
per request; the site's request log, ``CONCRETE_REQUEST_LOG``, also holds other clients' requests when the site is
shared, so it only counts the apply). Issue 17's target: <= 15 requests and <= 2 s for 150 pages under 3 parents.

The requests are also listed by route, so the cost can be checked against the design: the token, the default site,
the home page read on its own, one children list per parent of managed pages (home and the PARENTS pages: 1 +
PARENTS), and the file, user and group lists.

The site may be shared: the pages are made under PARENTS top-level pages named ``bench-HHMMSS-N`` (unique per run),
and at the end they are deleted again through the API, found by those paths (cmssync itself never prunes from an
emptied content directory); ``--no-cleanup``, ``--keep`` or ``--reuse`` leave them. No reset is needed.

Side by side (issue 17): ``--baseline [NAME=]DIR`` (repeatable) names another checkout of cmssync (``git worktree
add DIR REV``), ``--cache-off`` adds this checkout with ``CMSSYNC_TOKEN_CACHE=off``; each plan is then run with
every one of them in turn, on the same content, so both see the same load. Per plan
the table shows the wall time, the process's CPU time (``RUSAGE_CHILDREN``), the requests and the token request's
time as the client saw it (0 when the token came from the cache). The token cache (``auth.token_cache``) is this
run's own directory, so the user's cache neither helps nor is touched. ``--imports N`` also measures, N times per
checkout, the interpreter with the command line (``cmssync --version``) and the imports of a real plan (the sum of
the top-level modules of ``-X importtime``, which itself adds some overhead).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

DEFAULT_ENV = Path("/tmp/concrete-site.env")
PLAN_LOGGED = ["--debug", "--log-format", "json"]
"""Plans log each request they make (``api.request``): their own count, not the shared site's log."""
REPO = Path(__file__).resolve().parents[1]


def read_env(path: Path) -> dict[str, str]:
    """``KEY=value`` lines of the site's env file (comments and quotes as ``up.sh`` writes them)."""
    values: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("   #", 1)[0].strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        values[key.strip()] = value.strip().strip('"').strip("'")
    return values


def write_content(root: Path, base_url: str, parents: int, children: int, blocks: int) -> list[str]:
    """The content of the bench; returns the paths of its parent pages (unique to this run)."""
    (root / "pages").mkdir(parents=True)
    (root / "cmssync.yaml").write_text(
        f"site:\n  url: {base_url}\nauth:\n  grant: password\n  username: admin\npublish: approve\n"
        f"state: {root.parent / 'state' / 'state.json'}\n",
        encoding="utf-8",
    )
    stamp = time.strftime("%H%M%S")
    paths = []
    for p in range(1, parents + 1):
        section = f"bench-{stamp}-{p}"
        paths.append(f"/{section}")
        (root / "pages" / f"{section}.yaml").write_text(f"name: Bench {stamp} {p}\n", encoding="utf-8")
        folder = root / "pages" / section
        folder.mkdir()
        for c in range(1, children + 1):
            body = "".join(
                f"    - type: content\n      value:\n        content: <p>Page {p}.{c}, block {b}.</p>\n"
                for b in range(1, blocks + 1)
            )
            (folder / f"page-{c}.yaml").write_text(
                f"name: Page {c}\ndescription: Bench page {p}.{c}\nareas:\n  Main:\n{body}", encoding="utf-8"
            )
    return paths


def log_lines(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8", errors="replace").splitlines() if log.exists() else []


class Run:
    """One ``python -m cmssync`` process: exit code, wall and CPU seconds, the request-log lines, its output."""

    def __init__(self, code: int, seconds: float, cpu: float, lines: list[str], output: str) -> None:
        self.code, self.seconds, self.cpu, self.lines, self.output = code, seconds, cpu, lines, output

    def requests(self) -> list[dict[str, Any]]:
        """The requests the process itself made: its ``api.request`` log events (``--debug --log-format json``).

        The site's request log is not used for plans: on a shared site it also holds other clients' requests."""
        events = []
        for line in self.output.splitlines():
            if line.startswith("{") and '"api.request"' in line:
                with contextlib.suppress(ValueError):
                    events.append(json.loads(line))
        return events

    def token_ms(self) -> float:
        """The token request's time as the client saw it (``elapsed_ms``); 0 when the token came from the cache."""
        return sum(float(r.get("elapsed_ms", 0)) for r in self.requests() if r.get("route") == "/oauth/2.0/token")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(args: list[str], env: dict[str, str], log: Path, *, python_args: tuple[str, ...] = ()) -> Run:
    """``python -m cmssync ARGS`` with ``env`` (whose PYTHONPATH picks the checkout)."""
    before = len(log_lines(log))
    cpu = children_cpu()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *python_args, "-m", "cmssync", *args],
        env=env,
        cwd=tempfile.gettempdir(),  # not a checkout: ``-m`` puts the working directory before PYTHONPATH
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    seconds = time.perf_counter() - started
    cpu = children_cpu() - cpu
    time.sleep(0.2)  # the web server writes its log line after answering
    return Run(done.returncode, seconds, cpu, log_lines(log)[before:], done.stdout + done.stderr)


def import_ms(stderr: str) -> float:
    """The sum of the top-level modules' cumulative times in ``-X importtime`` output, in ms."""
    total = 0
    for line in stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$", line)
        if match and not match.group(2).startswith(" "):
            total += int(match.group(1))
    return total / 1000


def measure_imports(checkouts: dict[str, dict[str, str]], root: Path, log: Path, times: int) -> None:
    """Interpreter + CLI (``--version``) wall, and the imports of a real plan, per checkout, interleaved."""
    rows: dict[str, dict[str, list[float]]] = {name: {"cli": [], "imports": []} for name in checkouts}
    for _ in range(times):
        for name, env in checkouts.items():
            rows[name]["cli"].append(run(["--version"], env, log).seconds * 1000)
            traced = run(["plan", str(root)], env, log, python_args=("-X", "importtime"))
            rows[name]["imports"].append(import_ms(traced.output))
    print(
        "\n| checkout | interpreter + CLI (--version) wall, median ms | imports of a plan (-X importtime), median ms |"
    )
    print("|---|---|---|")
    for name, row in rows.items():
        print(f"| {name} | {statistics.median(row['cli']):.0f} | {statistics.median(row['imports']):.0f} |")


def routes(requests: list[dict[str, Any]]) -> Counter[str]:
    """``METHOD /route`` counts of a process's own requests."""
    return Counter(f"{r.get('method')} {r.get('route')}" for r in requests)


def cleanup(site: dict[str, str], paths: list[str]) -> None:
    """Delete the bench's pages: each parent's children, then the parent, found under the home page by the run's
    unique paths (``/bench-HHMMSS-N``), so nothing else on a shared site is touched."""
    from cmssync.api.client import ConcreteClient
    from cmssync.config import Settings
    from cmssync.logs import configure_logging

    configure_logging(level=logging.WARNING, json_lines=False)

    settings = Settings.model_validate(
        {
            "site": {"url": site["CMSSYNC_URL"]},
            "auth": {
                "grant": "password",
                "client_id": site["CMSSYNC_CLIENT_ID"],
                "client_secret": site["CMSSYNC_CLIENT_SECRET"],
                "username": site["CMSSYNC_USERNAME"],
                "password": site["CMSSYNC_PASSWORD"],
                "token_cache": False,
            },
        }
    )

    async def delete() -> int:
        deleted = 0
        async with ConcreteClient.from_settings(settings, base_dir=Path(tempfile.gettempdir())) as client:
            for parent in await client.page_children(1):
                if parent.path not in paths:
                    continue
                below = f"{parent.path}/"
                children = [c for c in await client.page_children(parent.id) if (c.path or "").startswith(below)]
                await asyncio.gather(*(client.delete_page(child.id) for child in children))
                await client.delete_page(parent.id)
                deleted += len(children) + 1
        return deleted

    started = time.perf_counter()
    deleted = asyncio.run(delete())
    print(f"cleanup: deleted the bench's {deleted} pages ({', '.join(paths)}) in {time.perf_counter() - started:.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", type=Path, default=DEFAULT_ENV)
    parser.add_argument("--parents", type=int, default=3)
    parser.add_argument("--children", type=int, default=50)
    parser.add_argument("--blocks", type=int, default=2)
    parser.add_argument("--plans", type=int, default=3)
    parser.add_argument("--reset", type=Path, help="Run this script first (the site's reset.sh).")
    parser.add_argument("--keep", type=Path, help="Keep the content and state in this new directory (no cleanup).")
    parser.add_argument("--reuse", type=Path, help="Plan a directory a --keep run left (no apply, no cleanup).")
    parser.add_argument(
        "--baseline",
        action="append",
        default=[],
        metavar="[NAME=]DIR",
        help="Another checkout of cmssync, run side by side (repeatable).",
    )
    parser.add_argument(
        "--cache-off", action="store_true", help="Also run this checkout with the token cache off, side by side."
    )
    parser.add_argument("--imports", type=int, default=0, metavar="N", help="Also measure imports N times.")
    parser.add_argument("--no-cleanup", action="store_true", help="Leave the bench's pages on the site.")
    options = parser.parse_args(argv)
    if not options.env.exists():
        print(f"no real site: {options.env} does not exist (see ../shared/realsite/README.md)", file=sys.stderr)
        return 2
    site = read_env(options.env)
    log = Path(site.get("CONCRETE_REQUEST_LOG", "/tmp/concrete-requests.log"))
    if options.reset is not None:
        subprocess.run([str(options.reset)], check=True, capture_output=True)
    pages = options.parents * options.children
    work = options.reuse or options.keep or Path(tempfile.mkdtemp(prefix="cmssync-realsite-bench-"))
    base_env = {**os.environ, "NO_COLOR": "1", "CMSSYNC_TOKEN_CACHE": str(work / "token-cache")}
    base_env.update({k: v for k, v in site.items() if k.startswith("CMSSYNC_")})
    base_env.pop("CMSSYNC_CONCURRENCY", None)
    checkouts: dict[str, dict[str, str]] = {}
    for given in options.baseline:
        name, _, path = given.rpartition("=")
        checkouts[name or f"baseline{len(checkouts) + 1}"] = {**base_env, "PYTHONPATH": str(Path(path).resolve())}
    checkouts["this"] = {**base_env, "PYTHONPATH": str(REPO)}
    if options.cache_off:
        checkouts["this, token cache off"] = {**checkouts["this"], "CMSSYNC_TOKEN_CACHE": "off"}
    env = checkouts["this"]
    made_paths: list[str] = []
    try:
        root = work / "site"
        if options.reuse is None:
            paths = write_content(root, site["CMSSYNC_URL"], options.parents, options.children, options.blocks)
            if options.keep is None and not options.no_cleanup:
                made_paths = paths
            done = run(["apply", "--yes", str(root)], env, log)
            if done.code != 0:
                print(done.output[-3000:], file=sys.stderr)
                return 1
            made = pages + options.parents
            print(
                f"apply of {made} pages ({options.blocks} blocks each below the parents): {done.seconds:.2f} s, ",
                end="",
            )
            print(f"{len(done.lines)} requests")
        # Each checkout plans from its own copy of the state and its own per-user cache: the content parse cache
        # differs between versions, and one checkout rewriting it would make the next one's plan a cold one.
        for number, checkout_env in enumerate(checkouts.values(), start=1):
            copy = work / f"state-{number}"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(work / "state", copy)
            checkout_env["CMSSYNC_STATE"] = str(copy / "state.json")
            checkout_env["XDG_CACHE_HOME"] = str(work / f"cache-{number}")
        results: dict[str, list[Run]] = {name: [] for name in checkouts}
        for attempt in range(1, options.plans + 1):
            for name, checkout_env in checkouts.items():
                done = run([*PLAN_LOGGED, "plan", "--detailed-exitcode", str(root)], checkout_env, log)
                if done.code != 0:
                    print(done.output[-3000:], file=sys.stderr)
                    print(f"plan {attempt} ({name}): exit {done.code}, not a no-op", file=sys.stderr)
                    return 1
                results[name].append(done)
                print(
                    f"no-op plan {attempt} ({name}): {done.seconds:.2f} s wall, {done.cpu:.2f} s CPU, "
                    f"{len(done.requests())} requests, token {done.token_ms():.0f} ms"
                )
                if attempt == 1:
                    for route, count in sorted(routes(done.requests()).items(), key=lambda item: -item[1]):
                        print(f"    {count:4d}  {route}")
        print("\n| checkout | plan wall median (best) | CPU median | requests | token ms per plan |")
        print("|---|---|---|---|---|")
        for name, runs in results.items():
            walls = [r.seconds for r in runs]
            print(
                f"| {name} | {statistics.median(walls):.2f} s ({min(walls):.2f}) | "
                f"{statistics.median(r.cpu for r in runs):.2f} s | {max(len(r.requests()) for r in runs)} | "
                f"{', '.join(f'{r.token_ms():.0f}' for r in runs)} |"
            )
        if options.imports:
            measure_imports(checkouts, root, log, options.imports)
        runs = results["this"]
        median = statistics.median(r.seconds for r in runs)
        requests_ok = max(len(r.requests()) for r in runs) <= 15
        print(
            f"target (150 pages under 3 parents): <= 15 requests: {'met' if requests_ok else 'MISSED'}; "
            f"<= 2 s (median): {'met' if median <= 2 else 'MISSED'} (median {median:.2f} s, best "
            f"{min(r.seconds for r in runs):.2f} s)"
        )
        return 0
    finally:
        if made_paths:
            cleanup(site, made_paths)
        if options.keep is None and options.reuse is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
