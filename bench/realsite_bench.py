"""Opt-in benchmark against a real Concrete 9.3.1 site: the cost of a no-op plan of 150 pages under 3 parents.

    python bench/realsite_bench.py [--env /tmp/concrete-site.env] [--parents 3] [--children 50] [--blocks 2]
                                   [--reset /work/shared/realsite/reset.sh] [--plans 3]

Needs the site of ``../shared/realsite/`` (``up.sh``) and its env file; without the env file it says so and exits
2. With ``--reset`` it first puts the site back to its reset point (the script given). It writes a content directory
of PARENTS top-level pages, each with CHILDREN child pages of BLOCKS content blocks, applies it with
``cmssync apply --yes`` (the create costs what it costs; its figures are printed too), then runs ``cmssync plan`` PLANS
times, verifying each is a no-op, and reports for each its wall time (the process, interpreter start and content
load included) and the requests the site answered, counted from the site's request log (``CONCRETE_REQUEST_LOG``:
one line per request). Issue 17's target: <= 15 requests and <= 2 s for 150 pages under 3 parents.

The requests are also listed by route, so the cost can be checked against the design: the token, the default site,
the home page read on its own, one children list per parent of managed pages (home and the PARENTS pages: 1 +
PARENTS), and the file, user and group lists.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

DEFAULT_ENV = Path("/tmp/concrete-site.env")
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


def write_content(root: Path, base_url: str, parents: int, children: int, blocks: int) -> None:
    (root / "pages").mkdir(parents=True)
    (root / "cmssync.yaml").write_text(
        f"site:\n  url: {base_url}\nauth:\n  grant: password\n  username: admin\npublish: approve\n"
        f"state: {root.parent / 'state' / 'state.json'}\n",
        encoding="utf-8",
    )
    stamp = time.strftime("%H%M%S")
    for p in range(1, parents + 1):
        section = f"bench-{stamp}-{p}"
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


def log_lines(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8", errors="replace").splitlines() if log.exists() else []


def run(args: list[str], env: dict[str, str], log: Path) -> tuple[int, float, list[str], str]:
    """``python -m cmssync ARGS``: exit code, wall seconds, the request-log lines it added, its output."""
    before = len(log_lines(log))
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "cmssync", *args], env=env, capture_output=True, text=True, check=False, timeout=1800
    )
    seconds = time.perf_counter() - started
    time.sleep(0.2)  # the web server writes its log line after answering
    return done.returncode, seconds, log_lines(log)[before:], done.stdout + done.stderr


def routes(lines: list[str]) -> Counter[str]:
    """``METHOD /route`` counts, with numeric ids and UUIDs replaced by ``{id}`` and the query dropped."""
    counts: Counter[str] = Counter()
    for line in lines:
        parts = line.split()
        if len(parts) < 5:
            continue
        method, uri = parts[1], parts[4].split("?")[0]
        uri = re.sub(r"/[0-9a-fA-F-]{36}|/\d+", "/{id}", uri)
        counts[f"{method} {uri}"] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", type=Path, default=DEFAULT_ENV)
    parser.add_argument("--parents", type=int, default=3)
    parser.add_argument("--children", type=int, default=50)
    parser.add_argument("--blocks", type=int, default=2)
    parser.add_argument("--plans", type=int, default=3)
    parser.add_argument("--reset", type=Path, help="Run this script first (the site's reset.sh).")
    parser.add_argument("--keep", type=Path, help="Keep the content and state in this new directory.")
    parser.add_argument("--reuse", type=Path, help="Plan a directory a --keep run left (no apply).")
    options = parser.parse_args(argv)
    if not options.env.exists():
        print(f"no real site: {options.env} does not exist (see ../shared/realsite/README.md)", file=sys.stderr)
        return 2
    site = read_env(options.env)
    log = Path(site.get("CONCRETE_REQUEST_LOG", "/tmp/concrete-requests.log"))
    if options.reset is not None:
        subprocess.run([str(options.reset)], check=True, capture_output=True)
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    env.update({k: v for k, v in site.items() if k.startswith("CMSSYNC_")})
    env.pop("CMSSYNC_CONCURRENCY", None)
    pages = options.parents * options.children
    work = options.reuse or options.keep or Path(tempfile.mkdtemp(prefix="cmssync-realsite-bench-"))
    try:
        root = work / "site"
        if options.reuse is None:
            write_content(root, site["CMSSYNC_URL"], options.parents, options.children, options.blocks)
            code, seconds, lines, output = run(["apply", "--yes", str(root)], env, log)
            if code != 0:
                print(output[-3000:], file=sys.stderr)
                return 1
            made = pages + options.parents
            print(f"apply of {made} pages ({options.blocks} blocks each below the parents): {seconds:.2f} s, ", end="")
            print(f"{len(lines)} requests")
        results = []
        for attempt in range(1, options.plans + 1):
            code, seconds, lines, output = run(["plan", "--detailed-exitcode", str(root)], env, log)
            if code != 0:
                print(output[-3000:], file=sys.stderr)
                print(f"plan {attempt}: exit {code}, not a no-op", file=sys.stderr)
                return 1
            results.append((seconds, len(lines)))
            print(f"no-op plan {attempt}: {seconds:.2f} s, {len(lines)} requests")
            if attempt == 1:
                for route, count in sorted(routes(lines).items(), key=lambda item: -item[1]):
                    print(f"    {count:4d}  {route}")
        median = statistics.median(s for s, _ in results)
        requests_ok = max(r for _, r in results) <= 15
        print(
            f"target (150 pages under 3 parents): <= 15 requests: {'met' if requests_ok else 'MISSED'}; "
            f"<= 2 s (median): {'met' if median <= 2 else 'MISSED'} (median {median:.2f} s, best "
            f"{min(s for s, _ in results):.2f} s)"
        )
        return 0
    finally:
        if options.keep is None and options.reuse is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
