"""Small content directories and live snapshots for planner tests (live values normalised as observe does)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from cmssync.content.loader import load_content
from cmssync.content.site import SiteContent
from cmssync.plan.blocks import LiveBlock
from cmssync.plan.normalize import normalize_block_value
from cmssync.plan.snapshot import LiveFile, LiveGroup, LivePage, LiveUser, Snapshot
from tests.support.files import write_files

BASE = "http://site.test"


def write_content(root: Path, files: Mapping[str, str | bytes]) -> SiteContent:
    write_files(root, files)
    if not (root / "cmssync.yaml").exists():
        (root / "cmssync.yaml").write_text(f"site:\n  url: {BASE}\n")
    return load_content(root)


def page(
    page_id: int,
    path: str,
    name: str,
    *,
    areas: Mapping[str, list[tuple[int, str, dict[str, str]]]] | None = None,
    description: str = "",
    attributes: Mapping[str, object] | None = None,
    live: int = 1,
    recent: int | None = None,
) -> LivePage:
    return LivePage(
        id=page_id,
        path=path,
        name=name,
        description=description,
        type="page",
        template="full",
        attributes=dict(attributes or {}),
        areas={
            area: tuple(
                LiveBlock(block_id, kind, normalize_block_value(kind, value, base_url=BASE))
                for block_id, kind, value in blocks
            )
            for area, blocks in (areas or {}).items()
        },
        live_version_id=live,
        recent_version_id=recent if recent is not None else live,
    )


def snapshot(
    *pages: LivePage,
    files: tuple[LiveFile, ...] = (),
    users: tuple[LiveUser, ...] = (),
    groups: tuple[str, ...] = (),
) -> Snapshot:
    home = next((p for p in pages if p.path == "/"), page(1, "/", "Home"))
    all_pages = {p.path: p for p in (home, *pages)}
    return Snapshot(
        site_url=BASE,
        home_page_id=home.id,
        pages=all_pages,
        pages_by_id={p.id: p for p in all_pages.values()},
        files={f.id: f for f in files},
        users={u.username: u for u in users},
        groups={name: LiveGroup(i + 10, name) for i, name in enumerate(groups)},
    )
