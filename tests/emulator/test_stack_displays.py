"""The sandbox shows and writes stack displays as the real 9.3.1 site did in ``tests/conformance/concrete-9.3.1/
stack-displays.jsonl``: the recorder itself (``tests/realsite/record_stack_displays.py``) is run against the sandbox,
seeded with the recorded site's stacks, and each exchange is compared with the recorded one by its facts.

Recorded (issue 36): a display is added and updated with ``{"stID": <the stack's page id>}`` and every read shows
``value: []``; only the render names the stack — the page's ``includes=areas.content`` holds the ``Main`` area of
the stack in its approved version, the public page the stack's newest version (a stack's draft shows there at
once); ``{}`` or a ``stID`` that is not a number → HTTP 500; an id that is no stack (999999, a page) is stored and
renders nothing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from cmssync.emulator.embedded import Sandbox
from tests.emulator.helpers import blocks_of, replay_recorder
from tests.realsite.record_stack_displays import MARKER, StackDisplayRecorder

RECORDING = Path(__file__).resolve().parents[1] / "conformance" / "concrete-9.3.1" / "stack-displays.jsonl"
DISPLAY = frozenset({"core_stack_display"})
STACKS = {"footer-column-1": 228, "footer-column-2": 229, "blog-sidebar": 232}


def _stack(handle: str, page_id: int) -> dict[str, Any]:
    words = handle.replace("-", " ")
    content = [{"type": "content", "value": {"content": f"<p>{words} seeded</p>"}}]
    return {"path": f"/!stacks/{handle}", "name": words.title(), "type": "core_stack", "template": False,
            "id": page_id, "areas": {"Main": content}}  # fmt: skip


SEED: dict[str, Any] = {
    "pages": [
        {"path": "/", "name": "Home"},
        {"path": "/about", "name": "About", "id": 234},
        {"path": "/!stacks", "name": "Stacks", "type": False, "template": False, "id": 214},
        *(_stack(handle, page_id) for handle, page_id in STACKS.items()),
    ],
    "global_areas": ["Footer Column 1", "Footer Column 2"],  # as the theme shows them on every public page
}


class _SandboxRecorder(StackDisplayRecorder):
    def stacks(self) -> dict[str, int]:
        return dict(STACKS)


def _facts(path: Path) -> list[tuple[str, int, Any]]:
    """Per exchange: its step, status and what it shows of stack displays — the markers of the stacks' and the
    page's blocks it renders, and the values of the display blocks it reads."""
    facts = []
    for line in path.read_text(encoding="utf-8").splitlines():
        exchange = json.loads(line)
        step, response = exchange["step"], exchange["response"]
        if step.startswith("setup.stack."):
            continue  # the stacks as installed: the seed does not copy them block for block
        markers = sorted(set(re.findall(MARKER + r"-\w+", exchange.get("note", ""))))
        facts.append(
            (step, response["status"], (markers, [value for _, value in blocks_of(response["body"], DISPLAY)]))
        )
    return facts


def test_stack_displays_are_written_read_and_rendered_as_recorded(sandbox: Sandbox, tmp_path: Path) -> None:
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(SEED), encoding="utf-8")
    sandbox.reset(seed=str(seed), dialect="concrete")
    replayed = tmp_path / "replayed.jsonl"
    replay_recorder(sandbox, _SandboxRecorder, replayed, _SandboxRecorder.run)
    recorded = _facts(RECORDING)
    assert [f[0] for f in recorded] == [f[0] for f in _facts(replayed)]
    assert _facts(replayed) == recorded
    shown = {step: markers for step, _, (markers, _) in recorded}
    column1, column2, draft = (f"{MARKER}-{name}" for name in ("column1", "column2", "draft"))
    assert column2 in shown["update.live"]  # the PUT's stID is shown
    assert column1 not in shown["update.live"]
    assert draft not in shown["draft.page_live"]  # the API renders a displayed stack's approved version
    assert draft in shown["draft.public"]  # the public page its newest
