"""Replay of ``subareas.jsonl``, ``stacks.jsonl`` and ``type-defaults.jsonl`` (tests/conformance/concrete-9.3.1/):
sub-areas of layouts and containers, global areas (stacks), and a page type's default blocks placed on a page
created through the API, recorded on a real Concrete CMS 9.3.1 site.

Same comparison as ``test_replay.py``, plus the marker counts of the public pages (a change shows, or does not, where
the real site showed it), against the recorded site rebuilt by ``replay_areas``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.emulator.replay import Result, load_transcript
from tests.emulator.replay_areas import (
    RECORDED_BASE,
    STACKS,
    SUBAREAS,
    TYPE_DEFAULTS,
    TYPE_DEFAULTS_BASE,
    stacks_seed,
    subareas_seed,
    type_defaults_seed,
)
from tests.emulator.replay_run import run_replay

#: Markers of the theme's own markup, which the sandbox renders its own way: name -> why not compared.
THEME_MARKERS = {
    "testimonials": "the Atomik theme's testimonial wrapper class; the sandbox renders a block type in its own markup",
    "original title": "the text of the title block as the theme lays it out (it also shows in the theme's header)",
}
RECORDINGS: dict[str, tuple[Path, Callable[[list[dict[str, Any]]], dict[str, Any]]]] = {
    "subareas.jsonl": (SUBAREAS, subareas_seed),
    "stacks.jsonl": (STACKS, stacks_seed),
    "type-defaults.jsonl": (TYPE_DEFAULTS, type_defaults_seed),
}


@pytest.fixture(scope="module", params=sorted(RECORDINGS))
def replay_results(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> list[Result]:
    path, seed = RECORDINGS[request.param]
    exchanges = load_transcript(path)
    work = tmp_path_factory.mktemp("replay-areas")
    base = TYPE_DEFAULTS_BASE if path == TYPE_DEFAULTS else RECORDED_BASE
    return run_replay(
        request.param, exchanges, seed(exchanges), work, {}, recorded_base=base, theme_markers=THEME_MARKERS
    )


def test_every_recorded_exchange_matches(replay_results: list[Result]) -> None:
    unexpected = [r for r in replay_results if not r.ok]
    assert not unexpected, "\n".join(f"#{r.seq} {r.step}: {'; '.join(r.problems)}" for r in unexpected)
