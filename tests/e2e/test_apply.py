"""apply makes the site match the content, and the following plan is empty (design.md §5), in both dialects."""

from __future__ import annotations

import json

import pytest

from tests.support.rawsite import RawSite
from tests.support.sites import Site
from tests.support.tokens import sandbox_token


def _ops(plan: object) -> list[tuple[str, str, str]]:
    return [(a.kind, a.key, a.op) for a in plan.actions]  # type: ignore[attr-defined]


async def test_apply_then_plan_is_empty_in_both_dialects(example_any_dialect: Site) -> None:
    site = example_any_dialect
    first = await site.plan()
    assert ("page", "/services/consulting", "create") in _ops(first)
    report = await site.apply()
    assert not report.failed, site.last_output
    second = await site.plan()
    assert second.actions == (), _ops(second)


async def test_plan_sends_no_write_request(example: Site) -> None:
    example.sandbox.clear_stats()
    plan = await example.plan()
    assert plan.has_changes
    requests = example.sandbox.stats()["requests"]
    writes = [r for r in requests if r["method"] != "GET" and r["route"] != "/oauth/2.0/token"]
    assert writes == []
    assert sum(r["count"] for r in requests if r["method"] == "GET") > 5


async def test_the_site_holds_what_the_content_says(example: Site, raw: RawSite) -> None:
    assert not (await example.apply()).failed, example.last_output
    home = raw.blocks("/", "Main")
    assert [kind for kind, _ in home] == ["page_title", "content", "horizontal_rule", "html"]
    logo = raw.all("/files")
    urls = [f["url"] for f in logo if f["url"].endswith("/logo.png")]
    assert any(url.split("/application/")[1] in home[1][1]["content"] for url in urls)
    about = raw.page_by_path("/about")
    assert about is not None
    assert about["name"] == "About us"
    assert {u["username"] for u in raw.all("/users")} >= {"jane.editor", "sam_writer"}
    assert {g["name"] for g in raw.all("/groups")} >= {"Content Team", "Reviewers"}


async def test_edits_reach_the_site_and_plan_empty_after_each(example: Site, raw: RawSite) -> None:
    assert not (await example.apply()).failed, example.last_output
    home = (example.root / "pages/index.yaml").read_text()

    # change one block's text
    example.write("pages/index.yaml", home.replace("We design, build and host", "We design and build"))
    await _converges(example)
    assert "We design and build" in raw.blocks("/", "Main")[1][1]["content"]

    # reorder blocks: move the html call-to-action before the horizontal rule
    text = (example.root / "pages/index.yaml").read_text()
    example.write("pages/index.yaml", _swap_blocks(text))
    await _converges(example)
    assert [k for k, _ in raw.blocks("/", "Main")] == ["page_title", "content", "html", "horizontal_rule"]

    # rename a page
    about = (example.root / "pages/about.yaml").read_text()
    example.write("pages/about.yaml", about.replace("name: About us", "name: About Example Co."))
    await _converges(example)
    page = raw.page_by_path("/about")
    assert page is not None
    assert page["name"] == "About Example Co."

    # add a group
    groups = (example.root / "groups.yaml").read_text()
    example.write("groups.yaml", groups + "- name: Translators\n")
    await _converges(example)
    assert "Translators" in {g["name"] for g in raw.all("/groups")}


async def test_users_email_and_password_change(example: Site, raw: RawSite, monkeypatch: pytest.MonkeyPatch) -> None:

    assert not (await example.apply()).failed, example.last_output
    users = (example.root / "users.yaml").read_text()
    example.write("users.yaml", users.replace("jane.editor@example.com", "jane@example.org"))
    monkeypatch.setenv("JANE_EDITOR_PASSWORD", "a-new-password-2")
    plan = await example.plan()
    [action] = plan.actions
    assert [(c.field, c.sensitive) for c in action.changes] == [("email", False), ("password", True)]
    await _converges(example)
    jane = next(u for u in raw.all("/users") if u["username"] == "jane.editor")
    assert jane["email"] == "jane@example.org"
    assert sandbox_token(example.sandbox, "account:read", username="jane.editor", password="a-new-password-2")


async def test_replace_and_move_a_file(example: Site, raw: RawSite) -> None:
    assert not (await example.apply()).failed, example.last_output
    before = {f["id"] for f in raw.all("/files")}
    (example.root / "files/images/logo.png").write_bytes((example.root / "files/images/logo.png").read_bytes() + b"\0")
    sidecar = (example.root / "files/documents/brochure.pdf.yaml").read_text()
    example.write("files/documents/brochure.pdf.yaml", sidecar.replace("folder: /documents", "folder: /images"))
    plan = await example.plan()
    assert {(a.key, a.op) for a in plan.actions if a.kind == "file"} == {
        ("images/logo.png", "replace"),
        ("documents/brochure.pdf", "move"),
    }
    await _converges(example)
    after = {f["id"]: f for f in raw.all("/files")}
    assert len(after) == len(before), "the replaced file's old version is deleted, nothing duplicated"
    logos = [f for f in after.values() if f["url"].endswith("/logo.png") and f["id"] not in before]
    assert len(logos) == 1
    assert logos[0]["url"].split("/application/")[1] in raw.blocks("/", "Main")[1][1]["content"]
    # The seed has a brochure.pdf of its own: find ours by the id cmssync recorded.
    state = json.loads(example.state_path.read_text())
    assert raw.get(f"/files/{state['files']['documents/brochure.pdf']['id']}")["folder"] == 10


async def test_prune_a_page_and_a_user(example: Site, raw: RawSite) -> None:
    assert not (await example.apply()).failed, example.last_output
    (example.root / "pages/services/training.yaml").unlink()
    users = (example.root / "users.yaml").read_text()
    example.write("users.yaml", users.split("- username: sam_writer")[0])
    kept = await example.plan()
    assert kept.actions == ()
    assert sorted((k.kind, k.keys) for k in kept.kept) == [("page", ("/services/training",)), ("user", ("sam_writer",))]
    report = await example.apply(prune=True)
    assert not report.failed, example.last_output
    assert raw.page_by_path("/services/training") is None
    assert "sam_writer" not in {u["username"] for u in raw.all("/users")}
    assert (await example.plan(prune=True)).actions == ()


async def test_publish_draft_leaves_live_untouched(example: Site, raw: RawSite) -> None:
    assert not (await example.apply()).failed, example.last_output
    config = (example.root / "cmssync.yaml").read_text()
    example.write("cmssync.yaml", config.replace("publish: approve", "publish: draft"))
    home = (example.root / "pages/index.yaml").read_text()
    example.write("pages/index.yaml", home.replace("We design, build and host", "DRAFT TEXT"))
    assert not (await example.apply()).failed, example.last_output
    page = raw.page_by_path("/")
    assert page is not None
    live_main = raw.blocks("/", "Main")
    assert "DRAFT TEXT" not in live_main[1][1]["content"]
    recent = raw.get(f"/pages/{page['id']}", includes="areas", version="recent")
    areas = recent["areas"]["data"] if isinstance(recent["areas"], dict) else recent["areas"]
    main = next(a for a in areas if a["name"] == "Main")
    blocks = main["blocks"]["data"] if isinstance(main["blocks"], dict) else main["blocks"]
    assert "DRAFT TEXT" in blocks[1]["value"]["content"]
    assert (await example.plan()).actions == (), "the pending draft is recognised, not duplicated"


async def _converges(site: Site) -> None:
    report = await site.apply()
    assert not report.failed, site.last_output
    again = await site.plan()
    assert again.actions == (), _ops(again)


def _swap_blocks(text: str) -> str:
    """Swap the horizontal_rule block and the html block that follows it in the home page file."""
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if "- type: horizontal_rule" in line)
    html = next(i for i in range(start + 1, len(lines)) if "- type: html" in lines[i])
    end = next(
        (
            i
            for i in range(html + 1, len(lines))
            if lines[i].lstrip().startswith("- type:") or not lines[i].startswith("    ")
        ),
        len(lines),
    )
    rule, block = lines[start:html], lines[html:end]
    return "".join(lines[:start] + block + rule + lines[end:])


async def test_an_incremental_run_reads_and_writes_only_what_changed(example: Site, raw: RawSite) -> None:
    from cmssync.plan.scope import scope_for_paths

    assert not (await example.apply()).failed, example.last_output
    about = (example.root / "pages/about.yaml").read_text()
    example.write("pages/about.yaml", about.replace("Meet <a", "Say hello to <a"))
    scope = scope_for_paths(["pages/about.yaml"])
    assert scope is not None
    example.sandbox.clear_stats()
    report = await example.apply(scope=scope)
    assert not report.failed, example.last_output
    assert [(o.action.key, o.status) for o in report.outcomes] == [("/about", "ok")]
    assert report.requests < 20, example.sandbox.stats()
    assert "Say hello to" in raw.blocks("/about", "Main")[1][1]["content"]
    assert (await example.plan()).actions == ()


def test_changed_files_map_to_a_scope() -> None:
    from cmssync.plan.scope import scope_for_paths
    from cmssync.plan.scope_model import Scope

    assert scope_for_paths(["pages/index.yaml", "pages/about/team.yaml", "files/images/logo.png.yaml"]) == Scope(
        pages=frozenset({"/", "/about/team"}), files=frozenset({"images/logo.png"})
    )
    assert scope_for_paths(["users.yaml"]) == Scope(all_users=True)
    assert scope_for_paths(["cmssync.yaml"]) is None
    assert scope_for_paths([".git/index", "pages/.about.yaml.swp"]) == Scope()


async def test_versions_keep_deletes_older_non_live_versions(example: Site, raw: RawSite) -> None:
    config = (example.root / "cmssync.yaml").read_text()
    example.write("cmssync.yaml", config.replace("versions: {keep: 10}", "versions: {keep: 2}"))
    assert "keep: 2" in (example.root / "cmssync.yaml").read_text()
    contact = (example.root / "pages/contact.yaml").read_text()
    for n in range(4):
        example.write("pages/contact.yaml", contact.replace("How to reach us.", f"How to reach us ({n})."))
        assert not (await example.apply()).failed, example.last_output
    page = raw.page_by_path("/contact")
    assert page is not None
    versions = raw.get(f"/page_versions/{page['id']}", limit=100)
    assert len(versions) == 2
    assert str(versions[0]["is_approved"]) in {"1", "True", "true"}
