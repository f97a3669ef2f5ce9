"""Benchmark: how fast ``cmssync daemon`` applies a one-block edit on a large site, and with how many requests.

    python -m bench.daemon_bench [--pages 1000] [--blocks 5] [--edits 5] [--debounce 0.5]

Starts a sandbox with ``--generate pages=N,blocks=N``, writes a content directory describing the generated pages
(read through plain HTTP: sections ``/section-K`` and their ``/section-K/page-N`` children, each with its ``Main``
blocks), applies it once in-process (taking ownership, writing the state), then starts the daemon as a real process
and edits one block in one page file, EDITS times. For each edit it measures the save-to-applied latency (the
daemon's own figure: first file event to end of run), the wall time from the save to the log line, and the requests
of the incremental run (the sandbox's own count, ``/__emulator/stats``). Then SIGTERM and the time to exit.

Targets: under 2 s after the debounce, under 20 requests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from bench.common import DaemonProcess
from cmssync.emulator.embedded import Sandbox
from cmssync.logs import configure_logging
from cmssync.sync.applying import ApplyRequest, apply_site
from cmssync.sync.workspace import open_workspace


def raw_client(sandbox: Sandbox) -> httpx.Client:
    token = httpx.post(
        sandbox.token_url,
        data={
            "grant_type": "password",
            "client_id": sandbox.client_id,
            "client_secret": sandbox.client_secret,
            "username": sandbox.admin_username,
            "password": sandbox.admin_password,
            "scope": "pages:read",
        },
    ).json()["access_token"]
    return httpx.Client(base_url=sandbox.api_url, headers={"Authorization": f"Bearer {token}"}, timeout=30)


def data(response: httpx.Response) -> Any:
    response.raise_for_status()
    body = response.json()
    return body["data"] if isinstance(body, dict) and "data" in body else body


def generated_pages(http: httpx.Client) -> Iterator[dict[str, Any]]:
    """Every generated page (sections first, then their children) with its areas."""
    for section in data(http.get("/pages/1/children")):
        if not str(section.get("path", "")).startswith("/section-"):
            continue
        yield data(http.get(f"/pages/{section['id']}", params={"includes": "areas"}))
        after: Any = None
        while True:
            params: dict[str, Any] = {"limit": 100, **({"after": after} if after is not None else {})}
            children = data(http.get(f"/pages/{section['id']}/children", params=params))
            if not children:
                break
            for child in children:
                yield data(http.get(f"/pages/{child['id']}", params={"includes": "areas"}))
            if len(children) < 100:
                break
            after = children[-1]["id"]


def page_yaml(page: dict[str, Any]) -> str:
    areas = page.get("areas") or []
    areas = areas["data"] if isinstance(areas, dict) else areas
    lines = [f"name: {json.dumps(page['name'])}", "type: page", "template: full", "areas:"]
    for area in areas:
        blocks = area["blocks"]["data"] if isinstance(area["blocks"], dict) else area["blocks"]
        lines.append(f"  {area['name']}:")
        for block in blocks:
            content = (block.get("value") or {}).get("content", "")
            lines += [f"    - type: {block['type']}", "      value:", f"        content: {json.dumps(content)}"]
    return "\n".join(lines) + "\n"


def write_content(root: Path, sandbox: Sandbox, state_dir: Path, debounce: float) -> tuple[int, Path]:
    """The content directory of the generated site; returns the page count and one page file to edit."""
    written: list[Path] = []
    with raw_client(sandbox) as http:
        for page in generated_pages(http):
            path = root / "pages" / (page["path"].strip("/") + ".yaml")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(page_yaml(page))
            written.append(path)
    (root / "cmssync.yaml").write_text(
        f"site: {{url: {json.dumps(sandbox.url)}}}\n"
        f"auth: {{grant: password, client_id: {sandbox.client_id}, username: {sandbox.admin_username}}}\n"
        f"state: {json.dumps(str(state_dir / 'state.json'))}\n"
        "concurrency: 8\n"
        f"daemon: {{debounce: {debounce}s, interval: null, feed: null, health: '127.0.0.1:0'}}\n"
    )
    children = [path for path in written if path.parent.name.startswith("section-")]
    if not children:
        raise SystemExit("the generated site has no pages below its sections: use --pages 2 or more")
    return len(written), children[len(children) // 2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--debounce", type=float, default=0.5)
    args = parser.parse_args()
    configure_logging(level=logging.WARNING)  # the in-process apply would log every request
    rows: list[tuple[str, str]] = []
    with (
        tempfile.TemporaryDirectory(prefix="cmssync-daemon-bench-") as temp,
        Sandbox(generate=f"pages={args.pages},blocks={args.blocks}") as sandbox,
    ):
        root, state_dir = Path(temp) / "site", Path(temp) / "state"
        started = time.monotonic()
        count, target = write_content(root, sandbox, state_dir, args.debounce)
        rows.append(("content written (pages, seconds)", f"{count}, {time.monotonic() - started:.1f}"))

        env = {k: v for k, v in os.environ.items() if not k.startswith("CMSSYNC_")}
        env |= {"CMSSYNC_CLIENT_SECRET": sandbox.client_secret, "CMSSYNC_PASSWORD": sandbox.admin_password}
        os.environ.update({k: env[k] for k in ("CMSSYNC_CLIENT_SECRET", "CMSSYNC_PASSWORD")})
        sandbox.clear_stats()
        started = time.monotonic()
        report = asyncio.run(apply_site(open_workspace(root), ApplyRequest()))
        if report is None or report.failed:
            raise SystemExit(f"the first apply failed: {report.counts()}")
        rows.append(("first full apply (s / requests / actions)", _first(time.monotonic() - started, report)))

        daemon = DaemonProcess(root, env)
        try:
            _, startup = daemon.wait_for("run finished", trigger="startup")
            rows.append(
                ("daemon startup full run (s / requests)", f"{startup['duration_s']:.2f} / {startup['requests']}")
            )
            latencies, walls, requests = [], [], []
            for edit in range(args.edits):
                text = target.read_text()
                old = "<p>Block 3 of page"
                assert old in text, target
                sandbox.clear_stats()
                mark = daemon.mark()
                saved = time.monotonic()
                temp_file = target.with_name(f".{target.name}.tmp")
                temp_file.write_text(text.replace(old, f"<p>Edit {edit}: block 3 of page", 1))
                os.replace(temp_file, target)
                seen, run = daemon.wait_for("run finished", after=mark, trigger="file")
                assert run["result"] == "success", run
                latencies.append(run["save_to_applied_s"])
                walls.append(seen - saved)
                requests.append(int(sandbox.stats()["total"]))
                mark = daemon.mark()
                target.write_text(target.read_text().replace(f"<p>Edit {edit}: block 3 of page", old, 1))
                daemon.wait_for("run finished", after=mark, trigger="file")  # the edit undone, before the next
            rows.append(("debounce (s)", f"{args.debounce}"))
            rows.append(("save-to-applied, daemon's figure (median / max s)", _spread(latencies)))
            rows.append(("save to log line, wall (median / max s)", _spread(walls)))
            rows.append(("  of which after the debounce (median s)", f"{statistics.median(walls) - args.debounce:.3f}"))
            rows.append(("requests of the incremental run (sandbox count)", ", ".join(map(str, requests))))
            stopping = time.monotonic()
            code = daemon.stop()
            seconds = time.monotonic() - stopping
            rows.append(("SIGTERM to exit (code, s)", f"{code}, {seconds:.2f}"))
        finally:
            if daemon.process.poll() is None:
                daemon.process.kill()
    width = max(len(name) for name, _ in rows)
    print(f"cmssync daemon benchmark: {args.pages} pages x {args.blocks} blocks")
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")
    return 0


def _first(seconds: float, report: Any) -> str:
    return f"{seconds:.1f} / {report.requests} / {len(report.outcomes)}"


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} / {max(values):.3f}"


if __name__ == "__main__":
    sys.exit(main())
