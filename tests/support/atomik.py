"""The sandbox seeded with the recorded ``atomik_full`` site (``blocks.jsonl``: its pages, layouts, containers,
galleries and files), reached as a real site is (:class:`~tests.realsite.harness.SiteAccess`)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from tests.emulator.replay import load_transcript
from tests.emulator.replay_blocks import BLOCKS, blocks_site_seed
from tests.realsite.harness import SiteAccess


@contextlib.contextmanager
def atomik_sandbox(sandbox: Sandbox, work: Path) -> Iterator[tuple[SiteAccess, dict[str, int]]]:
    """The seeded sandbox and the numeric ids of its files by UUID (the stored form of links needs them); the
    sandbox is reset to its default site afterwards. Skips the test when the recording is not beside the checkout."""
    if not BLOCKS.is_file():
        pytest.skip(f"recorded exchanges not found at {BLOCKS} (expected shared/ beside the repository)")
    seed = blocks_site_seed(load_transcript(BLOCKS))
    seed_file = work / "atomik-seed.json"
    seed_file.write_text(json.dumps(seed), encoding="utf-8")
    sandbox.reset(seed=str(seed_file), dialect="concrete")
    numeric = {str(f["uuid"]).lower(): int(f["id"]) for f in seed["files"]}
    try:
        yield (
            SiteAccess(
                base_url=sandbox.url,
                client_id=sandbox.client_id,
                client_secret=sandbox.client_secret,
                username=sandbox.admin_username,
                password=sandbox.admin_password,
                numeric_file_ids=lambda: numeric,
                request_count=lambda: int(sandbox.stats()["total"]),
            ),
            numeric,
        )
    finally:
        sandbox.reset(seed="default", dialect="concrete")
