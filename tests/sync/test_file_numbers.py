"""Learning numeric file ids with probe blocks (``cmssync.sync.file_numbers``), against a fake probe."""

from __future__ import annotations

import asyncio
import re

from cmssync.sync.file_numbers import BATCH, FileNumbers


class FakeSite:
    """Exports ``{CCM:FID_DL_n}`` like Concrete: the file with numeric id n, or an empty href."""

    def __init__(self, files: dict[int, str]) -> None:
        self.files = files
        self.probes: list[tuple[int, int]] = []

    async def probe(self, html: str) -> str:
        numbers = [int(n) for n in re.findall(r"\{CCM:FID_DL_(\d+)\}", html)]
        self.probes.append((numbers[0], numbers[-1]))
        return "".join(
            f'<a href="{{ccm:export:file:{self.files[n]}}}">{n}</a>' if n in self.files else f'<a href="">{n}</a>'
            for n in numbers
        )


def test_ids_are_learned_batch_by_batch_and_kept_for_the_run() -> None:
    site = FakeSite({3: "1:a.png", BATCH + 7: "2:b.pdf"})
    numbers = FileNumbers()
    assert asyncio.run(numbers.learn({"2:b.pdf"}, site.probe)) == set()
    assert numbers.known == {"1:a.png": 3, "2:b.pdf": BATCH + 7}
    assert site.probes == [(1, BATCH), (BATCH + 1, 2 * BATCH)]
    assert asyncio.run(numbers.learn({"1:a.png"}, site.probe)) == set()
    assert len(site.probes) == 2  # known already: no new probe


def test_probing_stops_after_a_batch_without_any_file() -> None:
    site = FakeSite({1: "1:a.png"})
    numbers = FileNumbers()
    assert asyncio.run(numbers.learn({"9:missing.png"}, site.probe)) == {"9:missing.png"}
    assert len(site.probes) == 2  # the second batch found nothing: past the newest id
    assert asyncio.run(numbers.learn({"9:missing.png"}, site.probe)) == {"9:missing.png"}
    assert len(site.probes) == 2


def test_concurrent_pages_share_one_probe() -> None:
    site = FakeSite({5: "1:a.png"})
    numbers = FileNumbers()

    async def both() -> list[set[str]]:
        return list(
            await asyncio.gather(numbers.learn({"1:a.png"}, site.probe), numbers.learn({"1:a.png"}, site.probe))
        )

    assert asyncio.run(both()) == [set(), set()]
    assert len(site.probes) == 1
