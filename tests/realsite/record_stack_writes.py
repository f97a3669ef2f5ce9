"""Record how a real 9.3.1 site versions one edit of a stack as cmssync applies it: ``python -m
tests.realsite.record_stack_writes ENV_FILE OUT`` (OUT: ``tests/conformance/concrete-9.3.1/stack-writes.jsonl``).

Opt-in, against a freshly reset real Concrete 9.3.1 site of ``../shared/realsite/``. Two scenarios, each on its own
stack (``footer-column-1``, ``footer-column-2``: the first area with blocks), each write followed by the stack's
versions (``GET /page_versions/{id}``) and its recent version with areas (``GET /pages/{id}?version=recent``):

* ``stack-writes``: what cmssync sends for an edit that updates one block and adds three (issue 37 item 6): the
  block update, three block adds, then the approval of the version the last write answered (or, when no answer
  names one, the draft cmssync journals before its first write); then the live stack.
* ``stack-writes-killed``: the same edit on the other stack, stopped after the update and the first add (a run
  killed in the middle: nothing approved); the live and recent stack as the next run finds them; then what the
  next run sends (the two adds left, the approval of the version the last one answered) and the live stack.

Only HTTP, plus ``mysql`` to find the stacks' ids (the env's ``CONCRETE_DB``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bench.realsite_bench import read_env
from tests.realsite.record_lists import PREFIX, Recorder, items_of

STACKS = {"stack-writes": "footer-column-1", "stack-writes-killed": "footer-column-2"}
ADDS = 3


class StackWritesRecorder(Recorder):
    def stack(self, handle: str) -> int:
        return int(self.sql(f"SELECT cID FROM PagePaths WHERE cPath = '/!stacks/{handle}'")[0][0])

    def reads(self, stack: int, what: str) -> None:
        self.call(f"versions.after_{what}", "GET", f"{PREFIX}/page_versions/{stack}", note=f"after {what}")
        self.call(
            f"recent.after_{what}",
            "GET",
            f"{PREFIX}/pages/{stack}",
            params={"version": "recent", "includes": "areas"},
            note=f"after {what}",
        )

    def live(self, stack: int, what: str) -> None:
        self.call(f"live.after_{what}", "GET", f"{PREFIX}/pages/{stack}", params={"includes": "areas"})

    def edit(self, scenario: str, *, stop_after: int | None) -> None:
        """The update of the first block and ``ADDS`` adds, each answered version noted; stopped (killed) after
        ``stop_after`` writes, else the version the last write answered approved as cmssync does."""
        self.scenario = scenario
        stack = self.stack(STACKS[scenario])
        self.live(stack, "nothing")
        self.reads(stack, "nothing")
        page = self.call("", "GET", f"{PREFIX}/pages/{stack}", params={"includes": "areas"}).json()["data"]
        area = next(a for a in items_of(page.get("areas")) if items_of(a["blocks"]))
        block = items_of(area["blocks"])[0]
        route = f"{PREFIX}/pages/{stack}/{quote(area['name'], safe='')}"
        value: dict[str, Any] = {"content": "<p>updated by cmssync</p>"}
        writes: list[tuple[str, str, str, dict[str, Any]]] = [
            ("update_block", "PUT", f"{route}/{block['id']}", {"value": value}),
            *(
                (f"add_block_{n}", "POST", route, {"type": "content", "value": {"content": f"<p>added {n}</p>"}})
                for n in range(1, ADDS + 1)
            ),
        ]
        # what cmssync journals before its first write: the pending draft, or the version after the newest
        newest = items_of(self.call("", "GET", f"{PREFIX}/page_versions/{stack}").json())[0]
        answered = int(newest["id"]) + (1 if newest["is_approved"] else 0)
        for number, (step, method, path, body) in enumerate(writes, start=1):
            answer = self.call(f"write.{step}", method, path, json=body).json()
            answered = _version_of(answer) or answered
            self.reads(stack, step)
            if stop_after is not None and number == stop_after:
                self.live(stack, "kill")
                self.scenario = f"{scenario}.next_run"
                writes_left = writes[number:]
                for step_left, method_left, path_left, body_left in writes_left:
                    answer = self.call(f"write.{step_left}", method_left, path_left, json=body_left).json()
                    answered = _version_of(answer) or answered
                    self.reads(stack, step_left)
                break
        self.call("write.approve", "PUT", f"{PREFIX}/page_versions/{stack}/{answered}", json={"is_approved": True})
        self.reads(stack, "approve")
        self.live(stack, "approve")


def _version_of(answer: Any) -> int | None:
    """The version a block write's answer names (``page.version``, as cmssync reads it), if any."""
    data = answer.get("data", answer) if isinstance(answer, dict) else {}
    page = data.get("page") if isinstance(data, dict) else None
    page = page.get("data", page) if isinstance(page, dict) else None
    version = page.get("version") if isinstance(page, dict) else None
    version = version.get("data", version) if isinstance(version, dict) else None
    return int(version["id"]) if isinstance(version, dict) and version.get("id") is not None else None


def main(argv: list[str]) -> int:
    recorder = StackWritesRecorder(read_env(Path(argv[0])), Path(argv[1]))
    recorder.login()
    recorder.edit("stack-writes", stop_after=None)
    recorder.edit("stack-writes-killed", stop_after=2)
    recorder.out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
