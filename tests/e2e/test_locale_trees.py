"""Every locale tree of a multilingual site (issue 35): the sandbox site has a ``de_DE`` tree at ``/de`` made as a
real 9.3.1 site makes it (``cmssync.emulator.locales``, recorded in ``locales.jsonl``): a copy of the default tree
whose pages place the same block ids as their sources, the page list showing the default tree only, and a ``de_DE``
version of the stack as a child page of the neutral stack.

Pull takes both trees (the second under ``pages/de/``, its home ``pages/de/index.yaml``) and the localized stack
next to the neutral one; the next plan is empty; an edit of a block shared with the default tree's original shows
on the ``/de`` page only; a new page file in ``pages/de/`` is created in that tree; a localized stack edit shows on
that locale's pages only.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from cmssync.commands.status import check_status
from cmssync.emulator.embedded import Sandbox
from cmssync.errors import ContentError
from cmssync.render.text import render_json, render_text
from tests.support.locale_trees import SEED
from tests.support.sites import Site


@pytest.fixture
def site(sandbox_server: Sandbox, tmp_path: Path) -> Site:
    return Site.seeded(sandbox_server, tmp_path, SEED)


def _public(site: Site, path: str) -> str:
    return httpx.get(site.sandbox.url + path, timeout=30).text


def _files(root: Path, folder: str) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in (root / folder).rglob("*.yaml"))


async def test_pull_takes_every_tree_and_the_plan_after_is_empty(site: Site) -> None:
    await site.pull()
    assert _files(site.root, "pages") == [
        "pages/about.yaml",
        "pages/about/team.yaml",
        "pages/de/about.yaml",
        "pages/de/about/team.yaml",
        "pages/de/index.yaml",
        "pages/index.yaml",
    ]
    assert _files(site.root, "stacks") == ["stacks/footer.yaml", "stacks/footer/footer.yaml"]
    assert "[de_DE] About" in (site.root / "pages/de/about.yaml").read_text(encoding="utf-8")
    assert (
        (site.root / "pages/de/index.yaml")
        .read_text(encoding="utf-8")
        .startswith("name: '[de_DE] Home'\nlocale: de_DE\n")
    )
    plan = await site.plan()
    assert not plan.actions, [a.id for a in plan.actions]
    before = {p: p.read_bytes() for p in site.root.rglob("*.yaml")}
    await site.pull()  # a second pull writes nothing
    assert {p: p.read_bytes() for p in site.root.rglob("*.yaml")} == before


async def test_what_the_api_cannot_do_is_a_located_error(site: Site) -> None:
    await site.pull()
    site.write("pages/fr/index.yaml", "name: Accueil\nlocale: fr_FR\n")
    with pytest.raises(ContentError) as caught:
        await site.plan()
    [problem] = caught.value.problems
    assert str(problem).startswith("pages/fr/index.yaml:1:1: locale fr_FR: the site has no such locale tree")
    assert "cmssync cannot add a locale" in str(problem)
    (site.root / "pages/fr/index.yaml").unlink()
    site.edit("pages/de/about.yaml", "name:", "locale: de_DE\nname:")
    with pytest.raises(ContentError, match="that tree's home is /de on the site, not /de/about"):
        await site.plan()
    site.edit("pages/de/about.yaml", "locale: de_DE\nname:", "translation_of: /about\nname:")
    with pytest.raises(ContentError, match="translation_of: the REST API cannot relate pages across locale trees"):
        await site.plan()


async def test_an_edit_in_the_second_tree_shows_there_only(site: Site) -> None:
    await site.pull()
    # /de/about places the same block ids as /about: the edit must reach the /de page only
    site.edit("pages/de/about.yaml", "Our story", "Unsere Geschichte")
    plan = await site.plan()
    assert [(a.kind, a.key, a.op) for a in plan.actions] == [("page", "/de/about", "update")]
    assert plan.trees == {"/": "en_US", "/de": "de_DE"}
    text = render_text(plan)
    assert "locale trees: en_US at /, de_DE at /de" in text
    assert "~ page /de/about (de_DE): update" in text
    assert json.loads(render_json(plan))["actions"][0]["tree"] == "de_DE"
    report = await site.apply()
    assert report.exit_code == 0, site.last_output
    assert "Unsere Geschichte" in _public(site, "/de/about")
    assert "Unsere Geschichte" not in _public(site, "/about")
    assert "Our story" in _public(site, "/about")
    assert not (await site.plan()).actions


async def test_a_new_page_file_in_the_tree_folder_is_created_in_that_tree(site: Site) -> None:
    await site.pull()
    site.write(
        "pages/de/kontakt.yaml",
        "name: Kontakt\ntype: page\ntemplate: full\nareas:\n  Main:\n"
        "    - type: content\n      value: {content: <p>Schreiben Sie uns</p>}\n",
    )
    plan = await site.plan()
    assert [(a.kind, a.key, a.op) for a in plan.actions] == [("page", "/de/kontakt", "create")]
    report = await site.apply()
    assert report.exit_code == 0, site.last_output
    page = _public(site, "/de/kontakt")
    assert '<html lang="de">' in page
    assert "Schreiben Sie uns" in page
    assert not (await site.plan()).actions


async def test_a_localized_stack_edit_shows_on_its_locales_pages_only(site: Site) -> None:
    await site.pull()
    site.edit("stacks/footer/footer.yaml", "Footer text", "Fusszeile")
    plan = await site.plan()
    assert [(a.kind, a.key, a.op) for a in plan.actions] == [("stack", "footer/footer", "update")]
    assert "~ stack footer/footer (de_DE): update" in render_text(plan)  # the one tree besides the default
    report = await site.apply()
    assert report.exit_code == 0, site.last_output
    for path in ("/de", "/de/about"):
        assert "Fusszeile" in _public(site, path)
    for path in ("/", "/about"):
        assert "Fusszeile" not in _public(site, path)
        assert "Footer text" in _public(site, path)
    assert not (await site.plan()).actions


async def test_a_single_locale_sites_pull_is_unchanged_by_a_second_tree(
    sandbox_server: Sandbox, tmp_path: Path
) -> None:
    """The default tree's files are byte for byte what a pull of the same site without the second tree writes (a
    single-locale site's content is exactly what it always was), and the second tree adds files only."""
    (tmp_path / "single").mkdir()
    (tmp_path / "multi").mkdir()
    single = Site.seeded(sandbox_server, tmp_path / "single", {k: v for k, v in SEED.items() if k != "locales"})
    await single.pull()
    before = {p.relative_to(single.root).as_posix(): p.read_bytes() for p in single.root.rglob("*") if p.is_file()}
    multi = Site.seeded(sandbox_server, tmp_path / "multi", SEED)
    await multi.pull()
    after = {p.relative_to(multi.root).as_posix(): p.read_bytes() for p in multi.root.rglob("*") if p.is_file()}
    assert {name for name in after if name not in before} == {
        "pages/de/index.yaml",
        "pages/de/about.yaml",
        "pages/de/about/team.yaml",
        "stacks/footer/footer.yaml",
    }
    for name, data in before.items():
        if not name.startswith(".cmssync"):
            assert after[name] == data, name  # the same sandbox server: the same site URL in cmssync.yaml


async def test_status_names_every_tree_and_the_translations_it_can_infer(site: Site) -> None:
    await site.pull()
    site.edit("pages/de/about.yaml", "Our story", "Unsere Geschichte")
    status = await check_status(site.root, overrides=site.overrides())
    assert status.trees == [
        {"locale": "en_US", "home": "/", "pages": 3, "changes": 0},
        {"locale": "de_DE", "home": "/de", "pages": 3, "changes": 1, "same_place_as_default": 3},
    ]
    assert "tree:      de_DE at /de: 3 page(s) managed, 1 change(s); 3 at the same place" in "\n".join(status.lines)


async def test_localized_stacks_of_two_more_trees_are_managed_with_no_tree_named(
    sandbox_server: Sandbox, tmp_path: Path
) -> None:
    """With two trees besides the default one, nothing the API shows tells which tree a stack's version is for
    (``localized-stacks.jsonl``): both versions are pulled and managed by their files, pull and status say that
    their tree is not named and why, plans name no tree for them (never a guess), and an edit shows on the pages of
    the one tree that renders that version."""
    site = Site.seeded(sandbox_server, tmp_path, {**SEED, "locales": [{"locale": "de_DE"}, {"locale": "fr_FR"}]})
    summary = await site.pull()
    assert _files(site.root, "stacks") == [
        "stacks/footer.yaml",
        "stacks/footer/footer-2.yaml",
        "stacks/footer/footer.yaml",
    ]
    assert "2 localized stack version(s) (stack:footer/footer, stack:footer/footer-2)" in summary
    assert "no locale tree named: the site has 2 trees besides the default one (de_DE, fr_FR)" in summary
    assert not (await site.plan()).actions
    site.edit("stacks/footer/footer-2.yaml", "Footer text", "Pied de page")
    plan = await site.plan()
    assert [(a.kind, a.key, plan.tree_of(a.kind, a.key)) for a in plan.actions] == [("stack", "footer/footer-2", None)]
    assert "~ stack footer/footer-2: update" in render_text(plan)
    status = await check_status(site.root, overrides=site.overrides())
    assert any(line.startswith("stacks:    2 localized stack version(s)") for line in status.lines), status.lines
    assert (await site.apply()).exit_code == 0, site.last_output
    shown = {
        path: "Pied de page" in _public(site, path) for path in ("/", "/about", "/de", "/de/about", "/fr", "/fr/about")
    }
    assert shown == {"/": False, "/about": False, "/de": False, "/de/about": False, "/fr": True, "/fr/about": True}
    assert not (await site.plan()).actions
