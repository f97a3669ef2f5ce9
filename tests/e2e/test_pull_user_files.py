"""Users kept one file each in ``users/`` (a layout the content allows beside ``users.yaml``) are pulled in their own
files: an editor's change reaches the user's file and the user is not listed as unmanaged, a site user taken in
goes to ``users.yaml`` without a second entry for a user ``users/`` holds (the content stayed loadable: the loader
refuses a user twice), and a local edit of a user's file is kept. Pull read only ``users.yaml`` before."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from cmssync.commands.pull import run_pull
from cmssync.emulator.embedded import Sandbox
from tests.support.sites import Site

ANN = "- username: ann\n  email: ann@example.com\n  password: ${env:ANN_PASSWORD}\n"
BOB = "- username: bob\n  email: bob@example.com\n  password: ${env:ANN_PASSWORD}\n"


@pytest.fixture
async def site(sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Site:
    monkeypatch.setenv("ANN_PASSWORD", "ann-secret-1")
    root = tmp_path / "site"
    root.mkdir()
    applied = Site(root, sandbox)
    applied.write("users/ann.yaml", ANN)
    applied.write("users.yaml", BOB)
    assert not (await applied.apply()).failed, applied.last_output
    return applied


async def pull(site: Site, *kinds: str) -> str:
    out = io.StringIO()
    assert await run_pull(site.root, out=out, overrides=site.overrides(), kinds=kinds) == 0, out.getvalue()
    return out.getvalue()


async def edit_email(site: Site, username: str, email: str) -> None:
    async with site.workspace().client() as client:
        [user] = [user async for user in client.iter_users() if user.username == username]
        await client.update_user(user.id, email=email)


def entries(site: Site, name: str) -> list[dict[str, str]]:
    return YAML(typ="safe").load((site.root / name).read_text())  # type: ignore[no-any-return]


async def test_an_editors_change_reaches_the_users_own_file(site: Site) -> None:
    await edit_email(site, "ann", "ann@editors.example")
    output = await pull(site)
    assert "ann" not in output.partition("not taken in")[2]  # managed: its file is users/ann.yaml
    assert entries(site, "users/ann.yaml") == [
        {"username": "ann", "email": "ann@editors.example", "password": "${env:ANN_PASSWORD}"}
    ]
    assert (site.root / "users.yaml").read_text() == BOB
    assert (await site.plan()).is_empty


async def test_a_user_taken_in_goes_to_users_yaml_once(site: Site) -> None:
    async with site.workspace().client() as client:
        await client.create_user(username="cid", email="cid@example.com", password="cid-secret-1")
    await pull(site, "user")
    names = [entry["username"] for entry in entries(site, "users.yaml")]
    assert names[0] == "bob"
    assert "cid" in names
    assert "ann" not in names
    assert (site.root / "users/ann.yaml").read_text() == ANN
    assert (await site.plan()).is_empty  # the content loads: no user twice


async def test_a_local_edit_of_a_users_file_is_kept(site: Site) -> None:
    site.edit("users/ann.yaml", "ann@example.com", "ann@local.example")
    await pull(site)
    assert (site.root / "users/ann.yaml").read_text() == ANN.replace("ann@example.com", "ann@local.example")
    assert [(a.id, a.op) for a in (await site.plan()).actions] == [("user:ann", "update")]  # apply writes it
