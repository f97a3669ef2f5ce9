"""Files are adopted by their bytes, never by name and size alone (issue 15, item 1).

Before: a content file the state did not know was matched to a site file by stored name and size, the managed set
was computed once per plan, and after an ambiguous upload the first same-named file was taken. So an editor's
unrelated ``x.txt`` of the same size was adopted, and after a run killed between upload and state save,
``a/x.txt`` and ``b/x.txt`` of one size became one site file: the site served the wrong bytes and ``plan`` said
"No changes". Every test here ends by reading, over plain HTTP, the bytes each state record's file serves
(``wrong_adoptions``: must be 0) and by planning again (must be empty).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import httpx
import pytest

from cmssync.api.client import ConcreteClient
from cmssync.api.errors import PermissionDenied
from cmssync.api.models import File
from cmssync.content.site import SiteContent
from cmssync.emulator.embedded import Sandbox
from cmssync.errors import ApplyError
from cmssync.plan.asset_forms import file_form
from cmssync.state.records import State
from cmssync.sync.file_adoption import uploaded_copy
from tests.reliability.sites import ReliabilitySite, write_settings
from tests.support.rawsite import RawSite
from tests.support.reliability_report import ReliabilityReport

OURS = b"ours: the price list\n"
THEIRS = b"an editor's own note\n"
assert len(OURS) == len(THEIRS)


def wrong_adoptions(raw: RawSite, content: SiteContent, state: State) -> list[str]:
    """State records whose site file does not serve the content's bytes, and site files claimed by two paths."""
    found: list[str] = []
    owners: dict[str, list[str]] = {}
    for path, record in sorted(state.files.items()):
        owners.setdefault(str(record.id).lower(), []).append(path)
        url = raw.get(f"/files/{record.id}")["url"]
        served = hashlib.sha256(httpx.get(url).content).hexdigest()
        if f"sha256:{served}" != f"sha256:{content.files[path].sha256.removeprefix('sha256:')}":
            found.append(f"file {path}: site file {record.id} serves other bytes")
    found += [f"site file {i} is claimed by {', '.join(paths)}" for i, paths in owners.items() if len(paths) > 1]
    return found


def site_files(raw: RawSite, name: str) -> list[str]:
    return sorted(
        str(item["id"]).lower()
        for item in raw.get("/files", limit=100)
        if PurePosixPath(str(item["url"]).split("?")[0]).name == name
    )


def editor_file(tmp_path: Path, name: str, body: bytes) -> Path:
    """A file of its own directory, to upload under ``name``."""
    source = tmp_path / "editor" / hashlib.sha256(body + os.urandom(8)).hexdigest()[:12] / name
    source.parent.mkdir(parents=True)
    source.write_bytes(body)
    return source


async def editor_upload(site: ReliabilitySite, tmp_path: Path, name: str, body: bytes) -> File:
    """A file uploaded outside cmssync (an editor in the dashboard, or a run whose state save never happened)."""
    source = editor_file(tmp_path, name, body)
    async with site.workspace().client() as client:
        return await client.upload_file(source)


def new_site(tmp_path: Path, sandbox: Sandbox, files: dict[str, bytes]) -> ReliabilitySite:
    root = tmp_path / "site"
    (root / "files").mkdir(parents=True, exist_ok=True)
    write_settings(root)
    for relative, body in files.items():
        (root / "files" / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / "files" / relative).write_bytes(body)
    return ReliabilitySite(root, sandbox, settings={"concurrency": 1})


async def test_an_editors_file_of_the_same_name_and_size_is_not_adopted(
    sandbox: Sandbox, raw: RawSite, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    site = new_site(tmp_path, sandbox, {"x.txt": OURS})
    theirs = await editor_upload(site, tmp_path, "x.txt", THEIRS)

    plan = await site.plan()
    [action] = plan.actions
    assert (action.key, action.op) == ("x.txt", "create")
    assert action.precondition.absent
    assert theirs.id.lower() in (action.note or "")
    report = await site.apply()
    again = await site.plan()

    wrong = wrong_adoptions(raw, site.content(), site.state())
    reliability_report.add(cases_tried=1, wrong_adoptions=len(wrong))
    assert not report.failed, site.last_output
    assert wrong == []
    assert str(site.state().files["x.txt"].id) != theirs.id.lower()
    assert theirs.id.lower() in site_files(raw, "x.txt")  # the editor's file is left alone
    assert again.is_empty, again


async def test_the_same_bytes_are_adopted_instead_of_uploaded_again(
    sandbox: Sandbox, raw: RawSite, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    site = new_site(tmp_path, sandbox, {"x.txt": OURS})
    earlier = await editor_upload(site, tmp_path, "x.txt", OURS)  # a run that died before saving its state

    [action] = (await site.plan()).actions
    assert (action.op, action.precondition.remote_id) == ("update", earlier.id.lower())
    sandbox.clear_stats()
    report = await site.apply()

    reliability_report.add(cases_tried=1, wrong_adoptions=len(wrong_adoptions(raw, site.content(), site.state())))
    assert not report.failed, site.last_output
    assert str(site.state().files["x.txt"].id) == earlier.id.lower()
    assert dict(sandbox.stats()["by_route"]).get("POST /files", 0) == 0
    assert (await site.plan()).is_empty


@pytest.mark.parametrize("same_bytes", [True, False], ids=["same-bytes", "other-bytes"])
async def test_two_paths_never_adopt_one_site_file_after_a_lost_state_save(
    same_bytes: bool, sandbox: Sandbox, raw: RawSite, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    """``a/x.txt`` was uploaded by a run killed before its state save; ``b/x.txt`` has the same size."""
    other = OURS if same_bytes else THEIRS
    site = new_site(tmp_path, sandbox, {"a/x.txt": OURS})
    assert not (await site.apply()).failed, site.last_output
    site.state_path.unlink()  # the kill: the upload happened, the state never heard of it
    (site.root / "files" / "b" / "x.txt").parent.mkdir()
    (site.root / "files" / "b" / "x.txt").write_bytes(other)

    plan = await site.plan()
    report = await site.apply()
    state = site.state()

    wrong = wrong_adoptions(raw, site.content(), state)
    reliability_report.add(cases_tried=1, kills=1, wrong_adoptions=len(wrong))
    assert sorted((a.key, a.op) for a in plan.actions) == [("a/x.txt", "update"), ("b/x.txt", "create")]
    assert not report.failed, site.last_output
    assert wrong == []
    assert sorted(str(record.id) for record in state.files.values()) == site_files(raw, "x.txt")
    assert (await site.plan()).is_empty


async def test_an_ambiguous_upload_adopts_only_the_new_copy_with_its_bytes(
    sandbox: Sandbox, raw: RawSite, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    """The upload of ``b/x.txt`` commits but answers 500. The site also holds an earlier copy of the same bytes
    (adopted by ``a/x.txt`` in this plan) and an editor's ``x.txt`` of the same size: neither may be taken for the
    upload, and the upload is not sent twice."""
    site = new_site(tmp_path, sandbox, {"a/x.txt": OURS, "b/x.txt": OURS})
    earlier = await editor_upload(site, tmp_path, "x.txt", OURS)
    theirs = await editor_upload(site, tmp_path, "x.txt", THEIRS)
    sandbox.clear_stats()
    sandbox.set_faults(["commit-then-500:1:times=1:method=POST:path=/ccm/api/1.0/files"], seed=1)
    try:
        report = await site.apply()
    finally:
        sandbox.clear_faults()
    state = site.state()

    wrong = wrong_adoptions(raw, site.content(), state)
    reliability_report.add(cases_tried=1, faults_injected=1, wrong_adoptions=len(wrong))
    assert not report.failed, site.last_output
    assert wrong == []
    assert str(state.files["a/x.txt"].id) == earlier.id.lower()
    assert str(state.files["b/x.txt"].id) not in (earlier.id.lower(), theirs.id.lower())
    assert dict(sandbox.stats()["by_route"]).get("POST /files", 0) == 1
    assert len(site_files(raw, "x.txt")) == 3
    assert (await site.plan()).is_empty


async def test_the_lookup_after_an_ambiguous_upload_needs_exactly_one_byte_identical_copy(
    sandbox: Sandbox, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    site = new_site(tmp_path, sandbox, {"x.txt": OURS})
    form = file_form(site.content().files["x.txt"])
    before = {f.id.lower() for f in await _all_files(site)}
    theirs = await editor_upload(site, tmp_path, "x.txt", THEIRS)
    async with site.workspace().client() as client:
        assert await uploaded_copy(client, "x.txt", form, claimed=set(), existed=before) is None  # other bytes only
        first = await editor_upload(site, tmp_path, "x.txt", OURS)
        found = await uploaded_copy(client, "x.txt", form, claimed=set(), existed=before)
        assert found is not None
        assert found.id == first.id
        assert await uploaded_copy(client, "x.txt", form, claimed={first.id.lower()}, existed=before) is None
        assert await uploaded_copy(client, "x.txt", form, claimed=set(), existed=before | {first.id.lower()}) is None
        second = await editor_upload(site, tmp_path, "x.txt", OURS)
        with pytest.raises(ApplyError) as refused:
            await uploaded_copy(client, "x.txt", form, claimed=set(), existed=before)
    reliability_report.add(cases_tried=1)
    message = str(refused.value)
    assert "file x.txt: the upload's outcome is unknown and 2 new site files hold its bytes" in message
    assert first.id.lower() in message
    assert second.id.lower() in message
    assert theirs.id.lower() not in message
    assert "left for the next run" in message


async def _all_files(site: ReliabilitySite) -> list[File]:
    async with site.workspace().client() as client:
        return [f async for f in client.iter_files()]


async def test_a_file_whose_bytes_cannot_be_read_is_not_adopted(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reliability_report: ReliabilityReport
) -> None:
    site = new_site(tmp_path, sandbox, {"x.txt": OURS})
    earlier = await editor_upload(site, tmp_path, "x.txt", OURS)

    async def unreadable(self: ConcreteClient, url: str) -> tuple[str, int]:
        raise PermissionDenied("Forbidden", method="GET", path=httpx.URL(url).path, status=403)

    monkeypatch.setattr(ConcreteClient, "sha256_at", unreadable)
    plan = await site.plan()
    reliability_report.add(cases_tried=1)
    [action] = plan.actions
    assert action.op == "create"
    assert any(f"site file {earlier.id.lower()} has the same name and size, but its bytes" in w for w in plan.warnings)


@pytest.fixture
def static_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A plain HTTP server in another process (so that its own buffers are not counted here), serving a folder."""
    folder = tmp_path / "served"
    folder.mkdir()
    server = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = re.search(r"port (\d+)", server.stdout.readline())
        assert port is not None
        yield f"http://127.0.0.1:{port.group(1)}", folder
    finally:
        server.terminate()
        server.communicate(timeout=10)


async def test_hashing_a_site_file_streams_it(
    sandbox: Sandbox,
    tmp_path: Path,
    static_server: tuple[str, Path],
    reliability_report: ReliabilityReport,
) -> None:
    """The byte check downloads a candidate as a stream: 64 MiB are hashed with under 1 MiB held at once."""
    base, folder = static_server
    chunk = os.urandom(1 << 20)
    expected = hashlib.sha256()
    with (folder / "big.txt").open("wb") as sink:
        for _ in range(64):
            sink.write(chunk)
            expected.update(chunk)
    site = new_site(tmp_path, sandbox, {})
    async with site.workspace().client() as client:
        tracemalloc.start()
        try:
            digest, size = await client.sha256_at(f"{base}/big.txt")
            _current, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    reliability_report.add(cases_tried=1)
    assert (digest, size) == (expected.hexdigest(), 64 << 20)
    assert peak < 1 << 20, f"{peak} bytes held while hashing {size}"
