"""The drift feed on a real site (issue 28): ``python -m bench.realsite_feed_bench [--env FILE] [--edits 3]``.

Opt-in: needs a real Concrete 9.3.1 site of ``../shared/realsite/`` (its env file; default ``/tmp/concrete-site.env``).
Applies a few pages under a new parent (``feed-bench-<time>``), starts ``cmssync daemon`` on them with
``daemon.feed`` = ``--poll`` (2 s), no schedule and no file watching, then:

1. **idle**: ``--idle`` seconds with nothing changing: the requests the site logged (its request log,
   ``CONCRETE_REQUEST_LOG``, lines added meanwhile; no other client may use the site) against the polls the daemon
   counted (``cmssync_drift_feed_polls_total``);
2. **managed edits** (``--edits``): an editor changes a block of a managed page through the API and approves it;
   the time from the approval's answer to the daemon's ``run started`` line with trigger ``drift`` for that page
   (noticed), and to its ``run finished`` (reverted: enforce mode);
3. **unmanaged edit**: the same on a page cmssync does not manage; the requests during the next polls against the
   polls (an unmanaged change costs nothing beyond the poll);
4. **stack edits** (``--edits``): the stack ``footer-column-1`` (``--stack-id``, 228 on the sample site) is managed
   too (``stacks/footer-column-1.yaml``); an editor changes its block and approves it: noticed and reverted as in 2.
   (a stack is in no list: the feed reads the managed stack by its id every second poll).

The bench's pages go to the trash at the end; the stack keeps the bench's content (``reset.sh`` after).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.common import DaemonProcess, table
from bench.realsite_bench import log_lines, read_env, run, write_content

DEFAULT_ENV = Path("/tmp/concrete-site.env")
PREFIX = "/ccm/api/1.0"
SCOPES = "pages:read pages:update pages:delete pages:areas:update_block pages:versions:read pages:versions:update"


class Editor:
    """Someone editing the site through the API, as the super admin."""

    def __init__(self, site: dict[str, str]) -> None:
        self.http = httpx.Client(base_url=site["CONCRETE_BASE"] + PREFIX, timeout=60)
        form = {
            "grant_type": "password",
            "client_id": site["CONCRETE_CLIENT_ID"],
            "client_secret": site["CONCRETE_CLIENT_SECRET"],
            "username": site["CONCRETE_ADMIN_USER"],
            "password": site["CONCRETE_ADMIN_PASSWORD"],
            "scope": SCOPES,
        }
        token = httpx.post(site["CONCRETE_BASE"] + "/oauth/2.0/token", data=form, timeout=60)
        token.raise_for_status()
        self.http.headers["Authorization"] = f"Bearer {token.json()['access_token']}"

    def page(self, page_id: int) -> dict[str, Any]:
        answer = self.http.get(f"/pages/{page_id}", params={"includes": "areas"})
        answer.raise_for_status()
        return dict(answer.json()["data"])

    def edit_block(self, page_id: int, text: str) -> float:
        """Change the page's first content block and approve the draft; the monotonic time of the approval."""
        page = self.page(page_id)
        areas = page["areas"]["data"] if isinstance(page.get("areas"), dict) else page.get("areas") or []
        area, block = next(
            (a["name"], b)
            for a in areas
            for b in (a["blocks"]["data"] if isinstance(a["blocks"], dict) else a["blocks"])
            if b.get("type") == "content"
        )
        self.http.put(f"/pages/{page_id}/{area}/{block['id']}", json={"value": {"content": text}}).raise_for_status()
        return self.approve(page_id)

    def rename(self, page_id: int, name: str) -> float:
        self.http.put(f"/pages/{page_id}", json={"name": name}).raise_for_status()
        return self.approve(page_id)

    def approve(self, page_id: int) -> float:
        versions = self.http.get(f"/page_versions/{page_id}").json()["data"]
        newest = max(int(v["id"]) for v in versions)
        self.http.put(f"/page_versions/{page_id}/{newest}", json={"is_approved": True}).raise_for_status()
        return time.monotonic()

    def trash(self, page_id: int) -> None:
        self.http.delete(f"/pages/{page_id}")


def polls(metrics_url: str) -> float:
    lines = httpx.get(metrics_url, timeout=10).text.splitlines()
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines if line.startswith("cmssync_drift_feed_polls_total"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", type=Path, default=DEFAULT_ENV)
    parser.add_argument("--poll", type=float, default=2.0)
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--edits", type=int, default=3)
    parser.add_argument("--stack-id", type=int, default=228)
    options = parser.parse_args(argv)
    if not options.env.exists():
        print(f"no real site: {options.env} does not exist (see ../shared/realsite/README.md)", file=sys.stderr)
        return 2
    site = read_env(options.env)
    log = Path(site.get("CONCRETE_REQUEST_LOG", "/tmp/concrete-requests.log"))
    work = Path(tempfile.mkdtemp(prefix="cmssync-feed-bench-"))
    env = {**os.environ, "NO_COLOR": "1", "CMSSYNC_TOKEN_CACHE": str(work / "token-cache")}
    env.update({k: v for k, v in site.items() if k.startswith("CMSSYNC_")})
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    root = work / "site"
    parents = write_content(root, site["CMSSYNC_URL"], 1, 3, 2)
    (root / "stacks").mkdir()
    footer = "areas:\n  Main:\n    - type: content\n      value: {content: '<p>Managed footer.</p>'}\n"
    (root / "stacks" / "footer-column-1.yaml").write_text(f"id: {options.stack_id}\nname: Footer Column 1\n{footer}")
    with (root / "cmssync.yaml").open("a", encoding="utf-8") as settings:
        settings.write(f"daemon: {{watch: false, interval: null, feed: {options.poll}s, health: '127.0.0.1:0'}}\n")
    applied = run(["apply", "--yes", str(root)], env, log)
    if applied.code != 0:
        print(applied.output[-3000:], file=sys.stderr)
        return 1
    editor = Editor(site)
    children = editor.http.get("/pages", params={"limit": "20"}).json()["data"]
    ids = {page["path"]: int(page["id"]) for page in children}
    managed = ids[f"{parents[0]}/page-1"]
    daemon = DaemonProcess(root, env)
    rows: list[list[object]] = []
    try:
        _, started = daemon.wait_for("health server listening")
        metrics = f"{started['url']}/metrics"
        daemon.wait_for("run finished", trigger="startup")
        time.sleep(options.poll * 1.5)  # the first poll sets where the feed starts
        before, count = polls(metrics), len(log_lines(log))
        time.sleep(options.idle)
        made, requests = polls(metrics) - before, len(log_lines(log)) - count
        rows.append(["idle", f"{options.idle:.0f} s", f"{made:.0f} polls", f"{requests} requests", ""])
        for number in [*range(1, options.edits + 1), *range(-options.edits, 0)]:
            time.sleep(random.uniform(0, options.poll))  # edits land anywhere between two polls
            mark = daemon.mark()
            edited = managed if number > 0 else options.stack_id
            approved = editor.edit_block(edited, f"<p>Edited on the site, {number}.</p>")
            noticed, _ = daemon.wait_for("run started", after=mark, trigger="drift", timeout=60)
            finished, line = daemon.wait_for("run finished", after=mark, trigger="drift", timeout=120)
            rows.append(
                [
                    f"managed page edit {number}" if number > 0 else f"stack edit {-number}",
                    f"noticed {noticed - approved:.2f} s",
                    f"reverted {finished - approved:.2f} s",
                    f"{line.get('requests')} requests in the run",
                    line.get("result"),
                ]
            )
            time.sleep(options.poll * 1.5)
        home_children = editor.http.get("/pages/1/children").json()["data"]
        other = next(int(p["id"]) for p in home_children if p["path"] not in parents)
        before, count, mark = polls(metrics), len(log_lines(log)), daemon.mark()
        editor.rename(other, f"Renamed {time.strftime('%H%M%S')}")
        after_edit = len(log_lines(log)) - count  # the editor's own requests
        time.sleep(options.poll * 3)
        made, requests = polls(metrics) - before, len(log_lines(log)) - count - after_edit
        runs = daemon.find("run started", mark, trigger="drift")
        rows.append(["unmanaged edit", f"{made:.0f} polls", f"{requests} requests", "run" if runs else "no run", ""])
    finally:
        daemon.stop()
        for path in parents:
            if path in ids:
                editor.trash(ids[path])
    print(f"drift feed on {site['CMSSYNC_URL']}, poll {options.poll} s")
    print(table(["what", "", "", "", "result"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
