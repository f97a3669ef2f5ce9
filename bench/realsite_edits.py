"""The daemon half of ``realsite_apply_bench.py``, and the site's env file and request log: one-block edits through a
running ``cmssync daemon``, timed from the save to the approval and to a public GET that shows the edit.

See ``realsite_apply_bench.py`` for what is measured and why; this module only keeps that script under ~400 lines.
"""

from __future__ import annotations

import functools
import os
import re
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.common import DaemonProcess, table
from bench.realsite_bench import log_lines

# -- the site's env file and request log -------------------------------------------------------------------------


def routes(lines: list[str]) -> Counter[str]:
    """``METHOD /route`` counts of request-log lines: the API prefix dropped, ids as ``{id}``, no query."""
    counts: Counter[str] = Counter()
    for line in lines:
        parts = line.split()
        if len(parts) >= 5:
            uri = parts[4].split("?")[0].replace("/ccm/api/1.0/", "/")
            counts[f"{parts[1]} {re.sub(r'/(?:[0-9a-fA-F-]{36}|[0-9]+)(?=/|$)', '/{id}', uri)}"] += 1
    return counts


@dataclass(frozen=True)
class LogLine:
    """One request of the site's log: ``<start time> <method> <status> <ms> <uri>`` (router.php writes the time
    the request started and its duration)."""

    started: float
    ms: float
    method: str
    uri: str

    @property
    def ended(self) -> float:
        return self.started + self.ms / 1000

    @property
    def api(self) -> bool:
        return self.uri.startswith(("/ccm/api/", "/oauth/"))


def parse_log(lines: list[str]) -> list[LogLine]:
    parsed = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 5:
            try:
                parsed.append(LogLine(float(parts[0]), float(parts[3]), parts[1], parts[4]))
            except ValueError:
                continue
    return parsed


class RequestLog:
    """Lines the site's request log gained since :meth:`mark` (the web server writes a line after answering)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def mark(self) -> int:
        return len(log_lines(self.path))

    def since(self, mark: int, settle: float = 0.3) -> list[str]:
        time.sleep(settle)
        return log_lines(self.path)[mark:]


# -- 3. daemon ------------------------------------------------------------------------------------------------------


@dataclass
class Edit:
    """One measured edit; times in seconds, from the save unless said otherwise."""

    debounce_end: float
    """Save to the daemon's ``run started`` (the end of the quiet window)."""
    run_finished: float
    """Save to the daemon's ``run finished``."""
    approved: float
    """Debounce end to the end of the approval (``PUT /page_versions``, the site's log): live from then on."""
    visible: float
    """Debounce end to the end of the first public GET showing the new text."""
    first_showing_started: float
    """Debounce end to the start of that GET."""
    polls: int
    get_ms: float
    """Median time of the public GETs (a full render of the page)."""
    daemon_requests: int
    log_requests: int
    timeline: list[tuple[str, float, float]]
    """The run's API requests from the site's log: route, start and end from the debounce end."""
    run_s: float
    stale: int = 0
    """Public GETs that started after the approval had ended and still showed the old text (a cache would)."""


@dataclass
class Poll:
    started: float
    ended: float
    shows: bool


def wait_visible(url: str, text: str, failed: Callable[[], dict[str, Any] | None], timeout: float = 30.0) -> list[Poll]:
    """GET the public page one request at a time until its HTML holds ``text``; every GET (monotonic times).
    ``failed`` says whether the daemon's run failed (then the text will never come)."""
    polls: list[Poll] = []
    with httpx.Client(timeout=30, headers={"Cache-Control": "no-cache", "Pragma": "no-cache"}) as http:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            started = time.monotonic()
            response = http.get(url, params={"cmssync-bench": uuid.uuid4().hex[:8]})
            polls.append(Poll(started, time.monotonic(), text in response.text))
            if polls[-1].shows:
                return polls
            if (failure := failed()) is not None:
                raise SystemExit(f"the daemon's run failed: {failure}")
    raise SystemExit(f"{url} did not show {text!r} within {timeout} s")


def route_of(line: LogLine) -> str:
    """``METHOD /route`` with ids as ``{id}`` and the API prefix dropped."""
    return next(iter(routes([f"0 {line.method} 200 0 {line.uri}"])))


def run_failure(daemon: DaemonProcess, mark: int) -> dict[str, Any] | None:
    found = daemon.find("run finished", mark, trigger="file")
    return found[1] if found is not None and found[1].get("result") != "success" else None


def edit_page(path: Path, old: str, new: str) -> None:
    """An editor's save: a temp file renamed over the page file."""
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_text(path.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    os.replace(temp, path)


def daemon_edits(root: Path, section: str, base: str, edits: int, env: dict[str, str], log: RequestLog) -> list[Edit]:
    daemon = DaemonProcess(root, env)
    results: list[Edit] = []
    try:
        daemon.wait_for("run finished", trigger="startup")
        for n in range(edits):
            page = 1 + (n * 37) % max(1, len(list((root / "pages" / section).glob("page-*.yaml"))))
            path = root / "pages" / section / f"page-{page}.yaml"
            marker = f"Edit {n} {uuid.uuid4().hex[:6]}"
            time.sleep(0.5)
            mark, log_mark = daemon.mark(), log.mark()
            saved, saved_epoch = time.monotonic(), time.time()
            edit_page(path, f"<p>Page {page}, block 2.</p>", f"<p>{marker} page {page}, block 2.</p>")
            started_at, _ = daemon.wait_for("run started", after=mark, trigger="file")
            polls = wait_visible(f"{base}/{section}/page-{page}", marker, functools.partial(run_failure, daemon, mark))
            finished_at, finished = daemon.wait_for("run finished", after=mark, trigger="file")
            if finished.get("result") != "success":
                raise SystemExit(f"daemon run failed: {finished}")
            zero = saved_epoch + (started_at - saved)  # the debounce's end, in the log's clock
            # The run's window only (someone else's requests before or after are not the run's; inside it they
            # cannot be told apart, so the daemon's own count is the exact one).
            until = finished_at - started_at + 0.05
            lines = [
                line for line in parse_log(log.since(log_mark)) if line.api and -0.05 <= line.started - zero <= until
            ]
            timeline = [(route_of(line), line.started - zero, line.ended - zero) for line in lines]
            approvals = [end for route, _, end in timeline if route.startswith("PUT /page_versions")]
            results.append(
                Edit(
                    debounce_end=started_at - saved,
                    run_finished=finished_at - saved,
                    approved=approvals[0] if approvals else float("nan"),
                    visible=polls[-1].ended - started_at,
                    first_showing_started=polls[-1].started - started_at,
                    polls=len(polls),
                    stale=sum(
                        1 for poll in polls if not poll.shows and approvals and poll.started - started_at > approvals[0]
                    ),
                    get_ms=statistics.median(p.ended - p.started for p in polls) * 1000,
                    daemon_requests=int(finished.get("requests", -1)),
                    log_requests=len(lines),
                    timeline=timeline,
                    run_s=float(finished.get("duration_s", 0.0)),
                )
            )
            # Put the block back (another run, not measured) so the content ends as it began.
            mark = daemon.mark()
            edit_page(path, f"<p>{marker} page {page}, block 2.</p>", f"<p>Page {page}, block 2.</p>")
            daemon.wait_for("run finished", after=mark, trigger="file")
    finally:
        daemon.stop()
    return results


def print_edits(edits: list[Edit], debounce: float) -> None:
    """The daemon table, each run's timeline, and the verdict on the 1 s target."""
    rows = [
        [
            n + 1,
            f"{e.debounce_end:.2f}",
            f"{e.run_finished - e.debounce_end:.2f}",
            f"{e.approved:.2f}",
            f"{e.first_showing_started:.2f} / {e.visible:.2f}",
            f"{e.polls} x {e.get_ms:.0f} ms",
            f"{e.daemon_requests} / {e.log_requests}",
        ]
        for n, e in enumerate(edits)
    ]
    print(f"\ndaemon one-block edits (debounce {debounce} s); seconds after the debounce's end:")
    heads = [
        "edit",
        "save->debounce end",
        "run finished",
        "approved (site log)",
        "first GET showing it: start / end",
        "public GETs",
        "requests (daemon / log in its window)",
    ]
    print(table(heads, rows))
    for n, e in enumerate(edits):
        steps = ", ".join(f"{route} {start:+.2f}..{end:.2f}" for route, start, end in e.timeline)
        print(f"  edit {n + 1}: {steps}")
    stale = sum(e.stale for e in edits)
    print(f"  public GETs started after the approval that still showed the old text: {stale}")
    approved = [e.approved for e in edits]
    shown = [e.visible for e in edits]
    verdict = "met" if max(approved) <= 1 else "MISSED"
    print(
        f"target: live <= 1 s after the debounce: {verdict} (approved: median {statistics.median(approved):.2f}"
        f" s, max {max(approved):.2f} s; a public GET showing it ended: median {statistics.median(shown):.2f}"
        f" s, max {max(shown):.2f} s)"
    )
