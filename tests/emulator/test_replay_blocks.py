"""Replay of ``blocks.jsonl``: block values, image columns, layouts, multi-record blocks, sub-areas, drafts seen
through batched reads, generated handles and the group list, recorded on a real Concrete CMS 9.3.1 site.

Same comparison as ``test_replay.py`` (block values of blocks created during the run are compared exactly; the
sample site's blocks by shape), against the recorded site rebuilt by ``replay_blocks.blocks_site_seed``.
"""

from __future__ import annotations

import pytest

from tests.emulator.replay import Result, load_transcript
from tests.emulator.replay_blocks import BLOCKS, BLOCKS_BASE, blocks_site_seed
from tests.emulator.replay_run import run_replay

#: seq -> why the sandbox cannot give the recorded answer.
_THEME = "the first <h1> is the Atomik theme's ({what}); the sandbox renders a bare page and the API shows neither"
ALLOWED_MISMATCHES: dict[int, str] = {
    220: _THEME.format(what="resource detail template's empty heading"),
    221: _THEME.format(what="image slider's first slide title, an entry the API never exports"),
    222: _THEME.format(what="site name in the home page's header"),
    235: _THEME.format(what="image slider's first slide title, an entry the API never exports"),
    242: _THEME.format(what="image slider's first slide title, an entry the API never exports"),
}


@pytest.fixture(scope="module")
def replay_results(tmp_path_factory: pytest.TempPathFactory) -> list[Result]:
    if not BLOCKS.is_file():
        pytest.skip(f"recorded exchanges not found at {BLOCKS} (expected shared/ beside the repository)")
    exchanges = load_transcript(BLOCKS)
    seed = blocks_site_seed(exchanges)
    work = tmp_path_factory.mktemp("replay-blocks")
    return run_replay("blocks.jsonl", exchanges, seed, work, ALLOWED_MISMATCHES, recorded_base=BLOCKS_BASE)


def test_every_recorded_exchange_matches_or_is_allowed(replay_results: list[Result]) -> None:
    unexpected = [r for r in replay_results if not r.ok and r.seq not in ALLOWED_MISMATCHES]
    assert not unexpected, "\n".join(f"#{r.seq} {r.step}: {'; '.join(r.problems)}" for r in unexpected)


def test_the_allow_list_names_real_exchanges(replay_results: list[Result]) -> None:
    assert set(ALLOWED_MISMATCHES) <= {r.seq for r in replay_results}
