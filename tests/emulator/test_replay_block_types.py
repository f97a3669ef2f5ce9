"""Replay of ``tests/conformance/concrete-9.3.1/block-types.jsonl``: the round trip of every block type a client
meets (export read → stored write → read back → public page → one-field update), the id probes (files, page types,
file folders) and edits in place of page-type default and sub-area blocks, recorded on a real Concrete CMS 9.3.1
site by ``tests/conformance/record_blocks.py``.

Same comparison as ``test_replay_blocks.py``, against the recorded site rebuilt by ``replay_blocks.blocks_site_seed``.
"""

from __future__ import annotations

import pytest

from tests.emulator.replay import BLOCK_TYPES_RECORDING, FIRST_CREATED_BLOCK, Result, load_transcript
from tests.emulator.replay_blocks import blocks_site_seed
from tests.emulator.replay_run import run_replay

RECORDED_BASE = "http://127.0.0.1:8090"

_NEIGHBOURS = "the next/previous labels show only beside a neighbour page; the sandbox's view has no page order"
_THEME = "the marker {text!r} also occurs in the Atomik theme's navigation and forms, which the sandbox does not render"
#: seq -> why the sandbox cannot give the recorded answer.
ALLOWED_MISMATCHES: dict[int, str] = {
    52: _THEME.format(text="Blog"),
    57: _THEME.format(text="Blog"),
    169: _NEIGHBOURS,
    174: _NEIGHBOURS,
    197: _THEME.format(text="Search"),
    202: _THEME.format(text="Search"),
    484: _THEME.format(text="Doc"),
    489: _THEME.format(text="Doc"),
    497: _THEME.format(text="Pat"),
    502: _THEME.format(text="Pat"),
    510: "the marker 'Posts' also occurs in the names of the pages the list shows, which the sandbox does not list",
    593: "the home page's testimonial uses the theme's own template, which does not repeat the name as the photo's alt",
}


@pytest.fixture(scope="module")
def replay_results(tmp_path_factory: pytest.TempPathFactory) -> list[Result]:
    exchanges = load_transcript(BLOCK_TYPES_RECORDING)
    seed = blocks_site_seed(exchanges, site_step="setup.site", first_block=FIRST_CREATED_BLOCK, owned_sub_areas=True)
    work = tmp_path_factory.mktemp("replay-block-types")
    return run_replay("block-types.jsonl", exchanges, seed, work, ALLOWED_MISMATCHES, recorded_base=RECORDED_BASE)


def test_every_recorded_exchange_matches_or_is_allowed(replay_results: list[Result]) -> None:
    unexpected = [r for r in replay_results if not r.ok and r.seq not in ALLOWED_MISMATCHES]
    assert not unexpected, "\n".join(f"#{r.seq} {r.step}: {'; '.join(r.problems)}" for r in unexpected)
