"""Pull merges (issue 26 items 1 and 2): after the README's quickstart a pull loses nothing, writes nothing and exits
0; a site change reaches only what it changed; objects the content does not manage are taken in only when asked;
same-named site files are told apart by identity."""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cmssync.cli import cli
from cmssync.commands.pull import run_pull
from cmssync.emulator.embedded import Sandbox
from cmssync.errors import StateError
from tests.support.editors import AccountEditor, Editor
from tests.support.rawsite import RawSite
from tests.support.sites import EXAMPLE, Site

LOGO_V2 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db00000000049454e44ae426082"
)
"""A 1x1 PNG: new bytes for the logo."""


def snapshot(site: Site) -> dict[str, str]:
    """Every file of the content directory and the state, by path, as a hash of its bytes."""
    files = [p for p in site.root.rglob("*") if p.is_file()] + [site.state_path]
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


async def pull(site: Site, *, take_all: bool = False, kinds: tuple[str, ...] = ()) -> tuple[int, str]:
    out = io.StringIO()
    extra = {"take_all": take_all, "kinds": kinds} if take_all or kinds else {}
    code = await run_pull(site.root, out=out, overrides=site.overrides(), **extra)
    return code, out.getvalue()


async def applied(example: Site) -> Site:
    report = await example.apply()
    assert not report.failed, example.last_output
    return example


async def test_a_pull_right_after_an_apply_writes_nothing_and_exits_0(example: Site) -> None:
    """The sandbox has its own logo.png and brochure.pdf beside the example's: a pull used to bind the example's
    paths to whichever came first in the list, and overwrite them with the sandbox's bytes."""
    await applied(example)
    before = snapshot(example)
    code, output = await pull(example)
    assert code == 0, output
    assert snapshot(example) == before, output
    assert "local edits kept" not in output
    assert "not taken in" in output
    assert "pages read one request each" not in output.split("not taken in")[1]  # a line of the summary, above
    assert "/blog" in output  # the sandbox's own pages are listed, not written
    assert "images/logo.png (another file of that name)" in output
    assert (await example.plan()).actions == ()


async def test_site_changes_come_in_and_everything_else_stays_as_written(
    example: Site, sandbox: Sandbox, tmp_path: Path
) -> None:
    await applied(example)
    editor, accounts = Editor(sandbox), AccountEditor(sandbox)
    try:
        editor.edit_block("/contact", "Main", 0, "<p>Write to us.</p>")
        accounts.edit_user("jane.editor", email="jane@newmail.example")
    finally:
        editor.close()
        accounts.close()
    code, output = await pull(example)
    assert code == 0, output
    contact = (example.root / "pages/contact.yaml").read_text()
    assert "<p>Write to us.</p>" in contact
    # the raw block, its comment and its values stay exactly as written
    raw_block = (EXAMPLE / "pages/contact.yaml").read_text().split("# A block type cmssync has no model for")[1]
    assert raw_block in contact
    assert "keep:" not in contact
    assert "Sidebar" not in contact  # an area the content does not manage stays out
    users = (example.root / "users.yaml").read_text()
    assert "email: jane@newmail.example" in users
    assert users.count("password: ${env:") == 2
    assert users.startswith("# Passwords come from the environment")
    assert "john" not in users
    state = example.workspace().load_state()
    assert state.users["jane.editor"].password_digest is not None, "the password digest of the last apply stays"
    plan = await example.plan()
    assert plan.actions == (), [(a.kind, a.key, a.op) for a in plan.actions]


@pytest.mark.parametrize("path", ["/", "/services"])
async def test_pull_pages_takes_an_editors_change_as_a_whole_pull_does(
    example: Site, sandbox: Sandbox, path: str
) -> None:
    """Issue 34 item 4: ``pull --pages PATH`` of a page whose file refers to files (``${file:…}``) refused the
    editor's change as a local edit (exit 1): files are not read for ``--pages``, so the file's references did not
    resolve. They resolve to what the state recorded now, and the page is recorded as a whole pull records it."""
    await applied(example)
    editor = Editor(sandbox)
    try:
        editor.edit_block(path, "Main", 1, "<p>Editor words.</p>")
    finally:
        editor.close()
    out = io.StringIO()
    code = await run_pull(example.root, out=out, overrides=example.overrides(), pages=(path,))
    assert code == 0, out.getvalue()
    assert "local edit" not in out.getvalue()
    text = (example.root / ("pages/index.yaml" if path == "/" else f"pages{path}.yaml")).read_text()
    assert "<p>Editor words.</p>" in text
    assert "${file:" in text  # the file's own references stay as written
    plan = await example.plan()
    assert plan.is_empty, [(a.kind, a.key, a.op, a.changes, a.blocks) for a in plan.actions]


async def test_all_or_a_kind_takes_in_what_the_content_does_not_manage(example: Site) -> None:
    await applied(example)
    logo = (example.root / "files/images/logo.png").read_bytes()
    code, output = await pull(example, kinds=("user",))
    assert code == 0, output
    users = (example.root / "users.yaml").read_text()
    assert "username: john" in users
    assert "${env:JANE_EDITOR_PASSWORD}" in users
    assert not (example.root / "pages/blog.yaml").exists()
    assert "pages: " in output
    assert "/blog" in output.split("not taken in")[1]
    code, output = await pull(example, take_all=True)
    assert code == 0, output
    assert (example.root / "pages/blog.yaml").is_file()
    assert (example.root / "files/images/logo.png").read_bytes() == logo, "the managed logo keeps its bytes"
    assert (example.root / "files/images/logo-2.png").is_file(), "the site's other logo gets a free name"
    state = example.workspace().load_state()
    ids = [str(record.id) for record in state.files.values()]
    assert len(ids) == len(set(ids)), "one path per site file"
    plan = await example.plan()
    assert plan.actions == (), [(a.kind, a.key, a.op) for a in plan.actions]


async def test_two_paths_bound_to_one_site_file_are_refused_and_pull_keeps_one(example: Site, raw: RawSite) -> None:
    """The state an older pull left after an editor renamed a managed file on the site: two paths, one site file.
    Every apply rewrote it from both sidecars, and deleting the "extra" path and pruning deleted the real file."""
    await applied(example)
    document = json.loads(example.state_path.read_text())
    logo_id = document["files"]["images/logo.png"]["id"]
    document["files"]["images/logo-renamed.png"] = dict(document["files"]["images/logo.png"])
    example.state_path.write_text(json.dumps(document))
    shutil.copy(example.root / "files/images/logo.png", example.root / "files/images/logo-renamed.png")
    bound_twice = f"binds file {logo_id} of the site to 2 files, images/logo-renamed.png and images/logo.png"
    validated = CliRunner().invoke(cli, ["validate", str(example.root)], env={"CMSSYNC_STATE": str(example.state_path)})
    assert isinstance(validated.exception, StateError)  # cli.main prints it and exits 1
    assert bound_twice in str(validated.exception)
    with pytest.raises(StateError, match=re.escape(bound_twice)):
        await example.plan()
    with pytest.raises(StateError, match="cmssync pull"):
        await example.apply(prune=True)

    code, output = await pull(example)
    assert code == 0, output
    assert "file images/logo-renamed.png: bound to the same site file as images/logo.png; that binding is dropped" in (
        output
    )
    state = example.workspace().load_state()
    assert [path for path, record in state.files.items() if record.id == logo_id] == ["images/logo.png"]
    (example.root / "files/images/logo-renamed.png").unlink()
    report = await example.apply(prune=True)
    assert not report.failed, example.last_output
    assert raw.get(f"/files/{logo_id}")["id"] == logo_id, "the site file is still there"
    assert (await example.plan()).actions == ()


async def test_a_file_renamed_on_the_site_is_shown_as_a_rename_and_keeps_one_binding(example: Site) -> None:
    """The sandbox's API cannot rename a file: the state says it had another name when it was last applied."""
    await applied(example)
    document = json.loads(example.state_path.read_text())
    record = document["files"]["images/logo.png"]
    current = record["url"]
    record["url"] = current.replace("logo.png", "company-logo.png")
    example.state_path.write_text(json.dumps(document))
    plan = await example.plan()
    assert plan.actions == ()
    rename = (
        "file images/logo.png: renamed on the site, from company-logo.png to logo.png; still bound to images/logo.png"
    )
    assert any(warning.startswith(rename) for warning in plan.warnings), plan.warnings
    code, output = await pull(example)
    assert code == 0, output
    assert rename in output
    state = example.workspace().load_state()
    assert [p for p, r in state.files.items() if r.id == record["id"]] == ["images/logo.png"]
    assert state.files["images/logo.png"].url == current


async def test_a_local_edit_the_site_did_not_touch_is_kept_and_pull_exits_0(example: Site) -> None:
    """A pull between editing a file and applying it: the site still holds what was last applied, so the edit is
    pending, not a conflict — kept as written, listed, exit 0; the apply then sends it."""
    await applied(example)
    example.edit("pages/about.yaml", "founded in 2014", "founded in 2013")
    example.edit("users.yaml", "email: sam.writer@example.com", "email: sam@writers.example")
    example.edit("files/documents/brochure.pdf.yaml", "Our services on one page.", "Everything we do.")
    (example.root / "files/images/logo.png").write_bytes(LOGO_V2)
    before = snapshot(example)
    code, output = await pull(example)
    assert code == 0, output
    assert snapshot(example) == before, output
    assert "local edits not applied yet, kept as written (4; apply sends them):" in output
    listed = (
        "\n  page /about: area:Main\n  user sam_writer (users.yaml)\n  file documents/brochure.pdf (its sidecar)\n"
        "  file images/logo.png (its bytes)\n"
    )
    assert listed in output
    assert "next plan is empty" not in output  # it sends these four
    assert output.rstrip().endswith("the next plan sends the local edits listed above")
    plan = await example.plan()
    assert sorted((a.key, a.op, a.drift) for a in plan.actions) == [
        ("/", "update", False),
        ("/about", "update", False),
        ("documents/brochure.pdf", "update", False),
        ("images/logo.png", "replace", False),
        ("sam_writer", "update", False),
    ]
    report = await example.apply()
    assert not report.failed, example.last_output
    assert (await example.plan()).actions == ()


async def test_a_page_moved_on_the_site_is_said_and_keeps_its_one_file(example: Site) -> None:
    """The API cannot move a page: the state says the page was at /reach-us when it was last applied."""
    await applied(example)
    document = json.loads(example.state_path.read_text())
    document["pages"]["/reach-us"] = document["pages"].pop("/contact")
    example.state_path.write_text(json.dumps(document))
    (example.root / "pages/contact.yaml").rename(example.root / "pages/reach-us.yaml")
    page_id = document["pages"]["/reach-us"]["id"]
    code, output = await pull(example)
    assert code == 0, output
    assert (
        f"note: page /reach-us: moved on the site to /contact (id {page_id}); its file stays at pages/reach-us.yaml"
        in (output)
    )
    assert not (example.root / "pages/contact.yaml").exists(), "no second file for the page"


async def test_pull_keeps_the_files_own_indentation_and_quoting(example: Site, sandbox: Sandbox) -> None:
    """A file written with sequences at their key's column and 4-space mappings, with quoted strings: pull changes
    the one value the site changed and no other line (it used to re-indent every list line in its own style)."""
    styled = (
        "name: 'About us'\n"
        'description: "Who we are and how we work."\n'
        "type: page\n"
        "template: full\n"
        "attributes:\n"
        "    meta_title: 'About us | Example Co.'\n"
        "    exclude_nav: false\n"
        "    is_featured: true\n"
        "areas:\n"
        "    Main:\n"
        "    - type: page_title\n"
        "    - type: content\n"
        "      value:\n"
        "          content: |\n"
        "              <p>Example Co. was founded in 2014 by two web developers who were tired of sites nobody could"
        " update.</p>\n"
        '              <p>Meet <a href="/about/team">the team</a>.</p>\n'
        "    Sidebar: []   # managed, and kept empty\n"
    )
    example.write("pages/about.yaml", styled)
    await applied(example)
    editor = Editor(sandbox)
    try:
        editor.edit_block("/about", "Main", 1, "<p>Founded in 2013.</p>")
    finally:
        editor.close()
    code, output = await pull(example)
    assert code == 0, output
    written = (example.root / "pages" / "about.yaml").read_text(encoding="utf-8")
    head, tail = styled.split("          content: |")[0], "    Sidebar: []   # managed, and kept empty\n"
    assert written.startswith(head), written  # every line above the changed value as it was
    assert written.endswith(tail), written
    assert written[len(head) : -len(tail)] == "          content: |-\n              <p>Founded in 2013.</p>\n"


async def test_a_second_pull_of_an_unchanged_site_downloads_nothing(example: Site, sandbox: Sandbox) -> None:
    """Files the site serves as recorded (the URL recorded, with its version's prefix, and the local file's size)
    are not downloaded again; a file replaced on the site (a new URL) is."""
    await applied(example)
    code, output = await pull(example)
    assert code == 0, output
    sandbox.clear_stats()
    before = snapshot(example)
    code, output = await pull(example)
    assert code == 0, output
    assert snapshot(example) == before
    downloads = sandbox.stats()["by_route"].get("GET /application/files/{path}", 0)
    assert downloads == 0, sandbox.stats()["by_route"]  # was one per file, every pull
    assert "files not downloaded again (the site serves them as recorded): 4" in output

    (example.root / "files/images/logo.png").write_bytes(LOGO_V2)  # a local edit: the bytes differ from the record
    sandbox.clear_stats()
    code, output = await pull(example)
    assert sandbox.stats()["by_route"].get("GET /application/files/{path}", 0) == 1  # that one is compared
