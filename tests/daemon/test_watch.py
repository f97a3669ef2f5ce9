"""The content watcher on a real directory (inotify and polling): editor saves, junk files, one run per save."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from cmssync.daemon.reconciler import Batch, Reconciler
from cmssync.daemon.watch import ContentWatcher, WatchMode, matters
from cmssync.plan.scope import scope_for_paths
from cmssync.plan.scope_model import Scope

EXAMPLE = Path(__file__).resolve().parents[2] / "content-example"
TIMEOUT = 5.0


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("pages/about.yaml", True),
        ("pages/about/team.yml", True),
        ("cmssync.yaml", True),
        ("users.yaml", True),
        ("groups/editors.yaml", True),
        ("files/images/logo.png", True),
        ("files/images/logo.png.yaml", True),
        ("README.md", False),
        ("pages/notes.txt", False),
        ("pages/tmpk3j2x9", False),
        (".git/index", False),
        (".cmssync/state.json", False),
        ("pages/.about.yaml.swp", False),
        ("pages/about.yaml~", False),
        ("pages/4913", False),
        ("pages/#about.yaml#", False),
        ("files/images/.DS_Store", False),
        ("../elsewhere.yaml", False),
    ],
)
def test_what_matters(path: str, expected: bool) -> None:
    assert matters(path) is expected


class Changes:
    def __init__(self) -> None:
        self.calls: list[list[str] | None] = []
        self.arrived = asyncio.Event()

    def __call__(self, paths: list[str] | None, at: float) -> None:
        assert isinstance(at, float)
        self.calls.append(paths)
        self.arrived.set()

    def paths(self) -> set[str]:
        return {p for call in self.calls if call is not None for p in call}

    async def wait(self) -> None:
        async with asyncio.timeout(TIMEOUT):
            await self.arrived.wait()


@pytest.fixture
def content(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".cmssync"))
    (root / ".git").mkdir()
    return root


async def watching(root: Path, on_change: Callable[[list[str] | None, float], None], mode: WatchMode) -> ContentWatcher:
    watcher = ContentWatcher(root, on_change, loop=asyncio.get_running_loop(), mode=mode, poll_interval=0.05)
    await asyncio.to_thread(watcher.start)
    return watcher


def atomic_save(path: Path, text: str) -> None:
    """What many editors (and ``git checkout``) do: write a temporary file, then rename it over the target."""
    temp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    temp.write_text(text)
    os.replace(temp, path)


def vim_save(path: Path, text: str) -> None:
    """vim with backupcopy=no: probe file 4913, rename the original to a backup, write anew, drop the backup."""
    probe = path.parent / "4913"
    probe.write_text("")
    probe.unlink()
    swap = path.parent / f".{path.name}.swp"
    swap.write_text("swap")
    backup = path.with_name(path.name + "~")
    os.replace(path, backup)
    path.write_text(text)
    backup.unlink()
    swap.unlink()


@pytest.mark.parametrize("mode", ["inotify", "poll"])
async def test_an_atomic_save_reports_the_target(content: Path, mode: WatchMode) -> None:
    changes = Changes()
    watcher = await watching(content, changes, mode)
    try:
        about = content / "pages/about.yaml"
        atomic_save(about, about.read_text().replace("About us", "About"))
        await changes.wait()
        await asyncio.sleep(0.2)  # let any further events of the same save arrive
    finally:
        await asyncio.to_thread(watcher.stop)
    assert changes.paths() == {"pages/about.yaml"}
    assert None not in changes.calls


async def test_junk_is_ignored(content: Path) -> None:
    changes = Changes()
    watcher = await watching(content, changes, "inotify")
    try:
        (content / ".git/HEAD").write_text("ref: refs/heads/main\n")
        (content / ".cmssync").mkdir()
        (content / ".cmssync/state.json").write_text("{}")
        (content / "pages/.about.yaml.swp").write_text("x")
        (content / "README.md").write_text("notes")
        (content / "pages/team.yaml~").write_text("x")
        (content / "users.yaml").write_text((content / "users.yaml").read_text())  # the marker: a real change
        await changes.wait()
        await asyncio.sleep(0.2)
    finally:
        await asyncio.to_thread(watcher.stop)
    assert changes.paths() == {"users.yaml"}


async def test_a_moved_directory_asks_for_a_full_run(content: Path) -> None:
    changes = Changes()
    watcher = await watching(content, changes, "inotify")
    try:
        os.replace(content / "pages/about", content / "pages/company")
        await changes.wait()
    finally:
        await asyncio.to_thread(watcher.stop)
    assert None in changes.calls


async def test_a_configmap_update_asks_for_a_full_run(content: Path) -> None:
    changes = Changes()
    watcher = await watching(content, changes, "inotify")
    try:
        (content / "..2026_11_21").mkdir()
        (content / "..data_tmp").symlink_to("..2026_11_21")
        os.replace(content / "..data_tmp", content / "..data")
        await changes.wait()
    finally:
        await asyncio.to_thread(watcher.stop)
    assert changes.calls == [None]


class Batches(list[Batch]):
    def __init__(self) -> None:
        super().__init__()
        self.changed = asyncio.Condition()

    async def run(self, batch: Batch) -> bool:
        self.append(batch)
        async with self.changed:
            self.changed.notify_all()
        return True

    async def wait_for(self, count: int, quiet: float = 0.5) -> None:
        """Until ``count`` batches ran, then ``quiet`` seconds more (no event tells that nothing more will come)."""
        async with asyncio.timeout(TIMEOUT), self.changed:
            await self.changed.wait_for(lambda: len(self) >= count)
        await asyncio.sleep(quiet)


@pytest.fixture
async def reconciled(content: Path) -> AsyncIterator[tuple[Path, Batches]]:
    batches = Batches()
    run = batches.run

    reconciler = Reconciler(run, debounce=0.2)
    task = asyncio.create_task(reconciler.serve())

    def on_change(paths: list[str] | None, at: float) -> None:
        reconciler.request("file", None if paths is None else scope_for_paths(paths), debounce=True, at=at)

    watcher = await watching(content, on_change, "inotify")
    try:
        yield content, batches
    finally:
        await asyncio.to_thread(watcher.stop)
        reconciler.stop()
        async with asyncio.timeout(TIMEOUT):
            await task


@pytest.mark.parametrize("save", [atomic_save, vim_save, lambda path, text: path.write_text(text)])
async def test_one_save_gives_one_incremental_run(
    reconciled: tuple[Path, Batches], save: Callable[[Path, str], None]
) -> None:
    root, batches = reconciled
    about = root / "pages/about.yaml"
    save(about, about.read_text().replace("About us", "About"))
    await batches.wait_for(1)
    assert len(batches) == 1
    assert batches[0].scope == Scope(pages=frozenset({"/about"}))
    assert batches[0].first_change_at is not None


async def test_a_burst_of_saves_gives_one_run(reconciled: tuple[Path, Batches]) -> None:
    root, batches = reconciled
    about = root / "pages/about.yaml"
    text = about.read_text()
    for index in range(20):
        atomic_save(about, text.replace("About us", f"About us ({index})"))
        await asyncio.sleep(0.01)
    atomic_save(root / "pages/contact.yaml", (root / "pages/contact.yaml").read_text())
    await batches.wait_for(1)
    assert len(batches) == 1
    assert batches[0].scope == Scope(pages=frozenset({"/about", "/contact"}))
