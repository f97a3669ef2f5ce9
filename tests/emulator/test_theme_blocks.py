"""The sandbox reads and writes the block types a theme or package adds (:mod:`cmssync.emulator.blocktypes.theme`)
as the real 9.3.1 site did in ``tests/conformance/concrete-9.3.1/theme-blocks.jsonl``: the recorder itself
(``tests/realsite/record_theme_blocks.py``) is run against the sandbox, and each exchange is compared with the
recorded one by its facts — status, the theme blocks' types and values, the site's messages, what the public page
renders of them.

Recorded (issue 36): such a block reads as every column of its table as a string (the flag as ``"1"``); its value
read back and sent with the block update reads the same; a key that is no column is dropped; a ``validate()`` that
refuses answers the update with HTTP 200 and its message (the add runs no validation); a type no one installed is
400 "Invalid block type handle."; a deleted block reads 404.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from cmssync.emulator.embedded import Sandbox
from tests.emulator.helpers import blocks_of, replay_recorder
from tests.realsite.record_theme_blocks import THEME_TYPES, ThemeBlockRecorder

RECORDING = Path(__file__).resolve().parents[1] / "conformance" / "concrete-9.3.1" / "theme-blocks.jsonl"


class _SandboxRecorder(ThemeBlockRecorder):
    def install(self) -> None:
        """The sandbox has the theme's types installed."""


def _facts(path: Path) -> list[tuple[str, int, Any]]:
    facts = []
    for line in path.read_text(encoding="utf-8").splitlines():
        exchange = json.loads(line)
        response = exchange["response"]
        body = response["body"]
        shown = (
            exchange.get("note", "")
            if isinstance(body, str)
            else (blocks_of(body, frozenset(THEME_TYPES)), body.get("errors") if isinstance(body, dict) else None)
        )
        facts.append((exchange["step"], response["status"], shown))
    return facts


def test_theme_blocks_are_written_and_read_as_recorded(sandbox: Sandbox, tmp_path: Path) -> None:
    replayed = tmp_path / "replayed.jsonl"
    replay_recorder(sandbox, _SandboxRecorder, replayed, _SandboxRecorder.run)
    recorded = _facts(RECORDING)
    assert [f[0] for f in _facts(replayed)] == [f[0] for f in recorded]
    for got, want in zip(_facts(replayed), recorded, strict=True):
        assert got == want, got[0]
    public = next(note for step, _, note in recorded if step == "public.page")
    assert re.search(r"callout Talk to us \| We answer on weekdays from 9 to 5\. \| Call", public)
