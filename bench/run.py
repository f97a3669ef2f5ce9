"""The cmssync benchmarks (issue 9), in one command: ``python bench/run.py`` (under 10 minutes on 2 cores).

On a sandbox holding a generated site (default 1,000 pages x 5 blocks, 1,000 files, 500 users) that answers every
request after 20 ms, it measures, each command as its own process (``bench/common.py``):

1. ``cmssync pull`` of the generated site: the content directory and state every later step starts from;
2. a no-op ``plan`` at the default concurrency (8) and at concurrency 1 (the sequential script a user would write);
3. the first ``apply`` of the whole site to an empty sandbox (``seed=empty``);
4. an ``apply`` of 1,000 block changes spread over 200 pages;
5. the upload of a 512 MiB (sparse) file, on a sandbox without latency: peak RSS against a tiny apply's;
6. ``bench/daemon_bench.py`` (another engineer's: one-block edit, save-to-applied) and ``bench/content_bench.py``
   (content loading of 1,000 pages), run as they are, their tables included.

For each: wall time, requests (counted by the sandbox), the lower bound ``max(requests / concurrency, longest
chain of requests that must follow each other) x latency`` and the ratio to it, peak RSS. ``--profile`` also
writes a cProfile of every measured command under ``--out``. Results are printed and written as JSON
(``--out/results.json``), from which ``bench/RESULTS.md`` is written by hand, with the explanations.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (  # noqa: E402
    REPO,
    Measurement,
    UploadSink,
    fmt_s,
    lower_bound,
    machine,
    run_measured,
    table,
)
from cmssync.emulator.embedded import Sandbox  # noqa: E402

USER_PASSWORD = "bench-user-password-1"
DEFAULT_CONCURRENCY = 8
PAGE_CREATE_CHAIN = 3 + 5  # POST page, PUT its fields, one POST per block, PUT approve (with 5 blocks)
OBSERVE_DEPTH = 4  # site, then the page tree one level at a time (home, sections, pages)


class Bench:
    def __init__(self, options: argparse.Namespace, out: Path) -> None:
        self.options = options
        self.out = out
        settings = {k: str(v) if isinstance(v, Path) else v for k, v in vars(options).items()}
        self.results: dict[str, Any] = {"machine": machine(), "options": settings, "rows": []}
        self.latency = options.latency_ms / 1000

    def measure(self, name: str, args: list[str], sandbox: Sandbox | None, env: dict[str, str]) -> Measurement:
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        profile = ["-m", "cProfile", "-o", str(self.out / f"{slug}.prof")] if self.options.profile else []
        print(f"  … {name}", flush=True)
        measured = run_measured(
            name, args, sandbox=sandbox, env=env, log=self.out / f"{slug}.log", python_args=profile
        )
        if measured.code not in (0, 2):
            raise SystemExit(f"{name} failed ({measured.code}):\n{measured.tail(40)}")
        return measured

    def row(self, measured: Measurement, *, concurrency: int, chain: int = 1, target: float | None = 1.5) -> None:
        bound = lower_bound(measured.requests, concurrency, self.latency, chain)
        ratio = measured.seconds / bound if bound else float("nan")
        self.results["rows"].append(
            {
                "name": measured.name,
                "seconds": round(measured.seconds, 2),
                "requests": measured.requests,
                "by_method": measured.by_method,
                "concurrency": concurrency,
                "lower_bound_s": round(bound, 2),
                "ratio": round(ratio, 2),
                "target_ratio": target,
                "rss_mib": round(measured.rss_mib, 1),
                "emulator_cpu_s": round(measured.emulator_cpu, 2),
            }
        )


def site_settings(root: Path, sandbox: Sandbox, state: Path, *, url: str | None = None) -> None:
    (root / "cmssync.yaml").write_text(
        json.dumps(
            {
                "site": {"url": url or sandbox.url},
                "auth": {"grant": "password", "client_id": sandbox.client_id, "username": sandbox.admin_username},
                "state": str(state),
                "concurrency": DEFAULT_CONCURRENCY,
                "prune": {"enabled": False},
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )


def environment(sandbox: Sandbox, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CMSSYNC_")}
    env.update(
        CMSSYNC_CLIENT_SECRET=sandbox.client_secret,
        CMSSYNC_PASSWORD=sandbox.admin_password,
        BENCH_USER_PASSWORD=USER_PASSWORD,
        **extra,
    )
    return env


def add_user_passwords(root: Path) -> int:
    """Pulled users have no password (the API cannot read one); a new user needs one."""
    users = root / "users.yaml"
    lines, count = [], 0
    for line in users.read_text(encoding="utf-8").splitlines():
        lines.append(line)
        if line.strip().startswith("email:"):
            indent = line[: len(line) - len(line.lstrip())]
            lines.append(f"{indent}password: ${{env:BENCH_USER_PASSWORD}}")
            count += 1
    users.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return count


def edit_blocks(root: Path, pages: int, blocks: int) -> int:
    """Change ``blocks`` content blocks in each of ``pages`` page files (spread over the site); returns the edits."""
    files = sorted((root / "pages").rglob("page-*.yaml"))
    step = max(1, len(files) // pages)
    edited = 0
    for path in files[::step][:pages]:
        text = path.read_text(encoding="utf-8")
        changed, count = re.subn(r"(<p>Block \d+ of page \d+\.)(</p>)", r"\1 Edited.\2", text, count=blocks)
        path.write_text(changed, encoding="utf-8")
        edited += count
    return edited


def planned_block_changes(bench: Bench, root: Path, env: dict[str, str]) -> int:
    plan_file = bench.out / "edit.plan.json"
    result = subprocess.run(
        [sys.executable, "-m", "cmssync", "plan", "-o", str(plan_file), str(root)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"plan failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    plan = json.loads(plan_file.read_text(encoding="utf-8"))
    return sum(len(action.get("blocks") or ()) for action in plan["actions"])


def site_benchmarks(bench: Bench, work: Path) -> None:
    options = bench.options
    spec = f"pages={options.pages},blocks={options.blocks},files={options.files},users={options.users}"
    print(f"sandbox: generate {spec}, latency {options.latency_ms} ms", flush=True)
    with Sandbox(seed="empty", generate=spec, latency_ms=options.latency_ms) as sandbox:
        root, state = work / "site", work / "state" / "state.json"
        root.mkdir(parents=True)
        site_settings(root, sandbox, state)
        env = environment(sandbox)

        pulled = bench.measure("pull (generated site)", ["pull", str(root)], sandbox, env)
        bench.row(pulled, concurrency=DEFAULT_CONCURRENCY, target=None)
        noop = bench.measure("plan, no-op (concurrency 8)", ["plan", "--detailed-exitcode", str(root)], sandbox, env)
        _expect_no_changes(noop)
        bench.row(noop, concurrency=DEFAULT_CONCURRENCY, chain=OBSERVE_DEPTH)
        sequential = bench.measure(
            "plan, no-op (concurrency 1)",
            ["plan", "--detailed-exitcode", str(root)],
            sandbox,
            environment(sandbox, CMSSYNC_CONCURRENCY="1"),
        )
        _expect_no_changes(sequential)
        bench.row(sequential, concurrency=1, target=None)
        bench.results["sequential_over_default"] = round(sequential.seconds / noop.seconds, 2)

        bench.results["users_given_passwords"] = add_user_passwords(root)
        sandbox.reset(seed="empty")
        shutil.rmtree(state.parent)
        first = bench.measure("apply, whole site to an empty sandbox", ["apply", "--yes", str(root)], sandbox, env)
        bench.row(first, concurrency=DEFAULT_CONCURRENCY, chain=OBSERVE_DEPTH + 2 * PAGE_CREATE_CHAIN)
        after = bench.measure("plan, no-op after the apply", ["plan", "--detailed-exitcode", str(root)], sandbox, env)
        _expect_no_changes(after)
        bench.row(after, concurrency=DEFAULT_CONCURRENCY, chain=OBSERVE_DEPTH)

        edits = edit_blocks(root, options.edit_pages, options.edit_blocks)
        bench.results["block_edits_written"] = edits
        bench.results["block_changes_planned"] = planned_block_changes(bench, root, env)
        changed = bench.measure(
            f"apply, {edits} block changes on {options.edit_pages} pages", ["apply", "--yes", str(root)], sandbox, env
        )
        bench.row(changed, concurrency=DEFAULT_CONCURRENCY, chain=1 + options.edit_blocks + 1)
        final = bench.measure("plan, no-op after the edits", ["plan", "--detailed-exitcode", str(root)], sandbox, env)
        _expect_no_changes(final)


def _expect_no_changes(measured: Measurement) -> None:
    if measured.code != 0:
        raise SystemExit(f"{measured.name}: the plan is not empty:\n{measured.tail(40)}")


def upload_benchmark(bench: Bench, work: Path) -> None:
    """Peak RSS of an apply that uploads a 512 MiB file, against the same apply uploading a 1 KiB one."""
    size = bench.options.upload_mib * 1024 * 1024
    with Sandbox(seed="empty") as sandbox, UploadSink(sandbox, "upload.mp4") as sink:
        env = environment(sandbox)
        measured: dict[str, Measurement] = {}
        for name, length in (("tiny", 1024), ("big", size)):
            root = work / f"upload-{name}"
            (root / "files").mkdir(parents=True)
            site_settings(root, sandbox, work / f"upload-{name}-state" / "state.json", url=sink.url)
            with (root / "files" / "upload.mp4").open("wb") as handle:
                handle.write(b"cmssync bench\n")
                handle.truncate(length)  # sparse: no disk used, and the bytes must still be read, hashed and sent
            sandbox.reset(seed="empty")
            sink.received = 0
            label = f"{length // 1024 // 1024} MiB" if length >= 1024 * 1024 else f"{length // 1024} KiB"
            measured[name] = bench.measure(f"apply, upload of a {label} file", ["apply", "--yes", str(root)], sandbox, env)
            if sink.received < length:
                raise SystemExit(f"the upload sink received {sink.received} bytes of {length}")
            bench.row(measured[name], concurrency=DEFAULT_CONCURRENCY, target=None)
        bench.results["upload_rss_growth_mib"] = round(measured["big"].rss_mib - measured["tiny"].rss_mib, 1)
        bench.results["upload_mib_per_s"] = round(bench.options.upload_mib / measured["big"].seconds, 1)


def other_benchmark(bench: Bench, key: str, script: str, args: list[str]) -> None:
    path = REPO / "bench" / script
    if not path.exists():
        bench.results[key] = {"missing": True, "output": f"not measured ({script} missing)"}
        return
    print(f"  … {script} {' '.join(args)}", flush=True)
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, str(path), *args], cwd=REPO, capture_output=True, text=True, check=False, timeout=600
    )
    bench.results[key] = {
        "missing": False,
        "code": result.returncode,
        "seconds": round(time.perf_counter() - started, 1),
        "output": result.stdout.strip() or result.stderr.strip()[-3000:],
    }


def report(results: dict[str, Any]) -> str:
    rows = results["rows"]
    lines = [
        "machine: " + ", ".join(f"{k} {v}" for k, v in results["machine"].items()),
        "",
        table(
            ["measurement", "wall", "requests", "conc.", "lower bound", "ratio", "target", "peak RSS", "emulator CPU"],
            [
                [
                    r["name"],
                    fmt_s(r["seconds"]),
                    r["requests"],
                    r["concurrency"],
                    fmt_s(r["lower_bound_s"]),
                    f"{r['ratio']:.2f}x",
                    f"<= {r['target_ratio']}x" if r["target_ratio"] else "-",
                    f"{r['rss_mib']:.0f} MiB",
                    fmt_s(r["emulator_cpu_s"]),
                ]
                for r in rows
            ],
        ),
        "",
    ]
    summary: list[tuple[str, str]] = []
    if "sequential_over_default" in results:
        summary.append(("no-op plan, concurrency 1 / concurrency 8 (target >= 6x)", f"{results['sequential_over_default']}x"))
    if "block_changes_planned" in results:
        summary.append(("block changes planned for the edit apply", str(results["block_changes_planned"])))
    if "upload_rss_growth_mib" in results:
        summary.append(("upload RSS growth over a 1 KiB upload (target < 64 MiB)", f"{results['upload_rss_growth_mib']} MiB"))
        summary.append(("upload throughput", f"{results['upload_mib_per_s']} MiB/s"))
    if rows:
        summary.append(("largest peak RSS of a command (target < 300 MiB)", f"{max(r['rss_mib'] for r in rows):.0f} MiB"))
    lines += [f"{name}: {value}" for name, value in summary]
    for key, title in (("daemon", "daemon (bench/daemon_bench.py)"), ("content", "content loading (bench/content_bench.py)")):
        if key in results:
            lines += ["", f"{title}:", results[key]["output"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--users", type=int, default=500)
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--edit-pages", type=int, default=200)
    parser.add_argument("--edit-blocks", type=int, default=5)
    parser.add_argument("--upload-mib", type=int, default=512)
    parser.add_argument("--skip", action="append", default=[], choices=["site", "upload", "daemon", "content"])
    parser.add_argument("--profile", action="store_true", help="Write a cProfile of every measured command.")
    parser.add_argument("--out", type=Path, help="Keep logs, profiles and results.json here (default: temporary).")
    options = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cmssync-bench-") as temp:
        out = options.out or Path(temp) / "out"
        out.mkdir(parents=True, exist_ok=True)
        bench = Bench(options, out)
        steps: list[tuple[str, Callable[[], None]]] = [
            ("site", lambda: site_benchmarks(bench, Path(temp) / "work")),
            ("upload", lambda: upload_benchmark(bench, Path(temp) / "upload")),
            ("daemon", lambda: other_benchmark(bench, "daemon", "daemon_bench.py", [])),
            ("content", lambda: other_benchmark(bench, "content", "content_bench.py", ["--pages", "1000"])),
        ]
        for key, step in steps:
            if key not in options.skip:
                step()
        bench.results["total_seconds"] = round(time.perf_counter() - started, 1)
        (out / "results.json").write_text(json.dumps(bench.results, indent=2) + "\n", encoding="utf-8")
        print()
        print(report(bench.results))
        print(f"\ntotal {bench.results['total_seconds']} s; results in {out / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
