"""Integration: files, users, groups and long lists against the sandbox, in both dialects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cmssync.api import errors as e
from cmssync.api.client import ConcreteClient
from tests.support.api_clients import sandbox_client

pytestmark = pytest.mark.slow


async def test_files(live: ConcreteClient, tmp_path: Path) -> None:
    seeded = [f async for f in live.iter_files()]
    assert len(seeded) >= 4
    folders = {f.folder for f in seeded if f.folder is not None}
    source = tmp_path / "notes-upload.txt"
    source.write_text("hello from cmssync\n")
    uploaded = await live.upload_file(source, folder_id=min(folders))
    assert uploaded.title == "notes-upload.txt"
    assert uploaded.size is not None
    assert uploaded.size.exact == source.stat().st_size
    again = await live.get_file(uploaded.id)
    assert again.size is not None
    assert again.size.exact == uploaded.size.exact
    changed = await live.update_file(uploaded.id, title="Notes", description="d", tags=["a", "b"])
    assert changed.title == "Notes"
    assert changed.tag_list == ["a", "b"]
    target = max(folders)
    moved = await live.move_file(uploaded.id, target)
    assert moved.folder == target
    copy = tmp_path / "copy.txt"
    assert await live.download_file(moved, copy) == source.stat().st_size
    assert copy.read_bytes() == source.read_bytes()
    assert (await live.delete_file(uploaded.id)).deleted
    with pytest.raises(e.NotFound):
        await live.get_file(uploaded.id)
    with pytest.raises(e.NotFound):
        await live.delete_file(uploaded.id)
    with pytest.raises(e.ValidationFailed):
        await live.move_file(seeded[0].id, 987654)


async def test_upload_refusals(live: ConcreteClient, tmp_path: Path) -> None:
    script = tmp_path / "evil.php"
    script.write_text("<?php echo 1;")
    with pytest.raises((e.ValidationFailed, e.PermissionDenied)):
        await live.upload_file(script)
    plain = tmp_path / "a.txt"
    plain.write_text("x")
    with pytest.raises(e.ValidationFailed):
        await live.upload_file(plain, folder_id=987654)


async def test_users(live: ConcreteClient, sandbox_any_dialect: Any) -> None:
    created = await live.create_user(username="integration_user", email="iu@example.com", password="first-pass1")
    assert created.username == "integration_user"
    assert created.status == "active"
    with pytest.raises(e.Conflict):
        await live.create_user(username="integration_user", email="other@example.com", password="first-pass1")
    with pytest.raises(e.ValidationFailed):
        await live.create_user(username="x", email="bad", password="1")
    updated = await live.update_user(created.id, email="iu2@example.com", language="de_DE")
    assert updated.email == "iu2@example.com"
    assert updated.language == "de_DE"
    with pytest.raises(e.Conflict):
        await live.update_user(created.id, email="iu2@example.com")
    changed = await live.change_password(created.id, "second-pass2")
    assert changed.id == created.id
    with pytest.raises(e.ValidationFailed):
        await live.change_password(created.id, "1")
    # The new password works for the password grant.
    as_user = sandbox_client(
        sandbox_any_dialect, auth_options={"username": "integration_user", "password": "second-pass2"}
    )
    async with as_user:
        assert (await as_user.account()).id == created.id
    assert (await live.get_user(created.id, includes=("groups",))).groups == []
    assert (await live.delete_user(created.id)).deleted
    with pytest.raises(e.NotFound):
        await live.get_user(created.id)
    with pytest.raises(e.NotFound):
        await live.delete_user(created.id)


async def test_groups(live: ConcreteClient) -> None:
    names = [g.name async for g in live.iter_groups()]
    assert "Administrators" in names
    assert "Guest" not in names
    group = await live.create_group("Integration Group")
    assert group.name == "Integration Group"
    assert (await live.get_group(group.id)).name == "Integration Group"
    assert (await live.get_group(1)).name == "Guest"
    with pytest.raises(e.NotFound):
        await live.get_group(999999)


async def test_long_lists(sandbox_any_dialect: Any) -> None:
    sandbox_any_dialect.reset(dialect=_dialect(sandbox_any_dialect), generate="pages=230,blocks=1,files=230,users=230")
    async with sandbox_client(sandbox_any_dialect) as client:
        users = [u.id async for u in client.iter_users()]
        files = [f.id async for f in client.iter_files()]
        pages = [n.page.id async for n in client.walk_page_tree()]
        listed_pages = [p.id async for p in client.iter_pages()]
        groups = [g.id async for g in client.iter_groups(limit=2)]
    # Sort keys tie (every generated object has the same date), so a cursor walk may skip items, like a real
    # server (concrete-api.md §13); it must still end, yield each id once and get past the first page.
    assert len(users) == len(set(users)) > 100
    assert len(files) == len(set(files)) > 100
    assert len(pages) == len(set(pages)) >= 231  # the tree is the reliable route
    assert len(listed_pages) == len(set(listed_pages))
    assert set(listed_pages) <= set(pages)
    assert len(groups) >= 2
    assert client.stats.count("GET", "/users", 200) >= 3


def _dialect(sandbox: Any) -> str:
    return "documented" if sandbox.api_url.endswith("/cms/api/1.0") else "concrete"
