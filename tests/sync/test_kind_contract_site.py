"""The kind contract against the sandbox (issue 33: the built-in kinds pass the same kind contract suite as a kind
added as one module): every built-in kind (group, file, page, stack, user) and the toy kind of
``tests/support/added_kinds`` is validated, planned, applied, targeted (``--target``), excluded (``--exclude``),
pulled (``pull --kind``), pruned, and applied from a saved plan with the content directory gone, by one
parametrised test each. A kind brings only its sample (``tests/support/kind_samples.py``): how an object is written,
how it is changed, what the site shows of it; where the API cannot do something (change or delete a group, create
or delete a stack) the sample says so and the contract checks that the kind's facts say the same."""

from __future__ import annotations

import asyncio
import io
import shutil
from collections.abc import Mapping
from pathlib import Path

import pytest

from cmssync.cli import main
from cmssync.commands.pull import run_pull
from cmssync.commands.validate import check
from cmssync.emulator.embedded import Sandbox
from cmssync.plan.actions import KeptObjects, Plan
from cmssync.plan.kinds import KindFacts
from cmssync.state.records import State
from tests.support.added_kinds import install
from tests.support.kind_samples import SAMPLES, SEED, ContentFiles, KindSample
from tests.support.rawsite import RawSite
from tests.support.sites import Site, set_sandbox_environment


@pytest.fixture(params=SAMPLES, ids=str)
def sample(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> KindSample:
    chosen: KindSample = request.param
    if chosen.added is not None:
        install(monkeypatch, chosen.added)
    for name, value in chosen.environment:
        monkeypatch.setenv(name, value)
    return chosen


@pytest.fixture
def site(sandbox: Sandbox, tmp_path: Path) -> Site:
    return Site.seeded(sandbox, tmp_path, SEED)


def facts(site: Site, sample: KindSample) -> KindFacts:
    return site.workspace().kinds.table[sample.kind]


def write(root: Path, files: ContentFiles) -> None:
    """The content directory holds these files only."""
    for child in root.iterdir():
        if not child.name.startswith("."):
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(text.encode() if isinstance(text, str) else text)


def objects(sample: KindSample, versions: Mapping[str, int]) -> ContentFiles:
    """The content files of these objects of the kind, each at its version (a file two objects share: joined)."""
    joined: dict[str, bytes] = {}
    for key, version in versions.items():
        for path, text in sample.files(key, version).items():
            joined[path] = joined.get(path, b"") + (text.encode() if isinstance(text, str) else text)
    return joined


def ops(plan: Plan, sample: KindSample) -> list[tuple[str, str]]:
    return [(action.id, action.op) for action in plan.actions if action.kind == sample.kind]


def test_a_kinds_content_is_validated(sample: KindSample, tmp_path: Path) -> None:
    write(tmp_path, dict(sample.invalid))
    assert [str(found) for found in check(tmp_path, secrets=False).problems] == [sample.problem]


async def test_a_kind_is_planned_applied_targeted_and_excluded(sample: KindSample, site: Site, raw: RawSite) -> None:
    a, b, _ = sample.keys
    kind = facts(site, sample)
    id_a, id_b = kind.id_of(a), kind.id_of(b)
    before_a, before_b = sample.seen(raw, a), sample.seen(raw, b)  # a stack is never created: it is there
    first = "create" if before_a is None else "update"
    write(site.root, objects(sample, {a: 0, b: 0}))
    assert ops(await site.plan(excludes=(id_a,)), sample) == [(id_b, first)]
    targeted = await site.plan(targets=(id_a,))
    assert [(action.id, action.op) for action in targeted.actions] == [(id_a, first)]
    assert not (await site.apply(targets=(id_a,))).failed, site.last_output
    assert (sample.seen(raw, a), sample.seen(raw, b)) == (sample.value(a, 0), before_b)
    assert not (await site.apply()).failed, site.last_output
    assert sample.seen(raw, b) == sample.value(b, 0)
    assert (await site.plan()).is_empty
    if sample.versions == 1:  # the API cannot change it (a group is its name)
        return
    write(site.root, objects(sample, {a: 1, b: 0}))
    assert ops(await site.plan(), sample) == [(id_a, "update")]
    assert ops(await site.plan(excludes=(id_a,)), sample) == []
    assert not (await site.apply()).failed, site.last_output
    assert (sample.seen(raw, a), sample.seen(raw, b)) == (sample.value(a, 1), sample.value(b, 0))
    assert (await site.plan()).is_empty


async def test_a_kinds_site_objects_are_pulled_with_kind(
    sample: KindSample, site: Site, raw: RawSite, tmp_path: Path
) -> None:
    a, _, c = sample.keys
    id_c = facts(site, sample).id_of(c)
    write(site.root, objects(sample, {a: 0}))
    assert not (await site.apply()).failed, site.last_output
    other = Site(tmp_path / "other", site.sandbox)  # someone else's content makes c on the site
    other.root.mkdir()
    write(other.root, objects(sample, {c: 0}))
    assert not (await other.apply()).failed, other.last_output
    assert sample.seen(raw, c) == sample.value(c, 0)

    await site.pull()
    assert id_c not in named(site)  # a directory that manages content takes in only what it manages
    out = io.StringIO()
    assert await run_pull(site.root, out=out, overrides=site.overrides(), kinds=(sample.kind,)) == 0, out.getvalue()
    assert id_c in named(site)
    assert (await site.plan()).is_empty  # what pull wrote is what the site holds


def named(site: Site) -> set[str]:
    """The ids of the objects the content names."""
    workspace = site.workspace()
    return workspace.kinds.table.object_ids(workspace.content, State())


async def test_a_kinds_dropped_objects_are_pruned(sample: KindSample, site: Site, raw: RawSite) -> None:
    a, b, _ = sample.keys
    kind = facts(site, sample)
    assert (kind.delete_rank is not None) == sample.deletes  # its facts say whether a prune deletes it
    write(site.root, objects(sample, {a: 0, b: 0}))
    assert not (await site.apply()).failed, site.last_output
    write(site.root, objects(sample, {b: 0}))
    kept = (await site.plan(prune=False)).kept
    pruned = ops(await site.plan(prune=True), sample)
    assert not (await site.apply(prune=True)).failed, site.last_output
    records = kind.kept_in(site.workspace().load_state())
    if sample.deletes:
        assert (kept, pruned) == ((KeptObjects(kind=sample.kind, keys=(a,)),), [(kind.id_of(a), "delete")])
        assert (sample.seen(raw, a), a in records) == (None, False)
    else:  # left on the site, and no delete planned
        assert (kept, pruned) == ((), [])
        assert sample.seen(raw, a) == sample.value(a, 0)
    assert b in records
    assert sample.seen(raw, b) == sample.value(b, 0)


def test_a_kinds_saved_plan_applies_with_the_content_directory_gone(
    sample: KindSample, site: Site, raw: RawSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its actions carry their desired form (the pages' ``Action.page``, an added kind's ``Action.form``, …): apply
    reads no content."""
    a, b, _ = sample.keys
    last = sample.versions - 1
    write(site.root, objects(sample, {a: 0}))
    assert not asyncio.run(site.apply()).failed, site.last_output
    write(site.root, objects(sample, {a: last, b: 0}))
    set_sandbox_environment(monkeypatch, site.sandbox, site.state_path.parent)
    plan_file = tmp_path / "plan.json"
    assert main(["plan", str(site.root), "-o", str(plan_file)]) == 0
    kept = tmp_path / "content-kept"
    shutil.move(site.root, kept)
    assert main(["apply", str(site.root), str(plan_file)]) == 0
    assert (sample.seen(raw, a), sample.seen(raw, b)) == (sample.value(a, last), sample.value(b, 0))
    shutil.move(kept, site.root)
    assert asyncio.run(site.plan()).is_empty
