"""Pull writes new files with the fast writer (cmssync/content/yaml_emit.py): on the sample site with every block
type (block-types.jsonl), every file pull wrote is byte for byte what ruamel's round-trip dumper writes for its data,
the fast path wrote every page file, and the next plan is empty."""

from __future__ import annotations

from pathlib import Path

from cmssync.content.blocktypes import block_type
from cmssync.content.writer import read_plain
from cmssync.content.yaml_emit import dump_fresh
from cmssync.emulator.embedded import Sandbox
from tests.emulator.replay import BLOCK_TYPES_RECORDING, FIRST_CREATED_BLOCK, load_transcript
from tests.emulator.replay_blocks import blocks_site_seed
from tests.support.pull_records import recorded_as_loaded
from tests.support.sites import Site
from tests.support.yaml_text import ruamel_text


async def test_every_file_pull_writes_is_what_ruamel_writes(sandbox_server: Sandbox, tmp_path: Path) -> None:
    seed = blocks_site_seed(
        load_transcript(BLOCK_TYPES_RECORDING),
        site_step="setup.site",
        first_block=FIRST_CREATED_BLOCK,
        owned_sub_areas=True,
    )
    site = Site.seeded(sandbox_server, tmp_path, seed)
    await site.pull()
    written = [path for path in site.root.rglob("*.yaml") if path.name != "cmssync.yaml"]
    types: set[str] = set()
    for path in written:
        data = read_plain(path)
        text = path.read_text(encoding="utf-8")
        assert text == ruamel_text(data), path
        if path.is_relative_to(site.root / "pages"):
            assert dump_fresh(data) == text, path  # the fast path wrote it
            types |= {str(block.get("type") or block["keep"]["type"]) for block in _blocks(data)}
    assert len([t for t in types if block_type(t) is not None]) >= 15, sorted(types)
    plan = await site.plan()
    assert plan.actions == (), [(a.kind, a.key, a.op) for a in plan.actions]
    assert recorded_as_loaded(site)[True] == len(written_pages := list((site.root / "pages").rglob("*.yaml")))
    assert written_pages


def _blocks(data: dict[str, object]) -> list[dict[str, object]]:
    areas = data.get("areas")
    return [b for blocks in (areas or {}).values() for b in blocks or () if isinstance(b, dict)]  # type: ignore[union-attr]
