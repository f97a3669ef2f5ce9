"""``cmssync status`` for machines: a JSON document and an exit code that says whether the site drifted."""

from __future__ import annotations

import io
import json

from cmssync.commands.status import run_status
from cmssync.emulator.embedded import Sandbox
from tests.support.editors import Editor
from tests.support.sites import Site


async def status(site: Site, *args: str, **kwargs: object) -> tuple[int, str]:
    out = io.StringIO()
    code = await run_status(site.root, out=out, overrides=site.overrides(), **kwargs)  # type: ignore[arg-type]
    return code, out.getvalue()


async def test_status_json_and_detailed_exit_code_follow_the_drift(example: Site) -> None:
    code, text = await status(example, output_format="json", detailed_exitcode=True)
    document = json.loads(text)
    assert code == 2
    assert document["format_version"] == 2
    assert document["ok"] is True
    assert document["connection"]["authenticated"] is True
    assert document["drift"]["in_sync"] is False
    assert document["drift"]["summary"]["create"] > 0

    assert not (await example.apply()).failed
    code, text = await status(example, output_format="json", detailed_exitcode=True)
    assert code == 0
    assert json.loads(text)["drift"]["in_sync"] is True
    code, text = await status(example)
    assert code == 0
    assert "drift:     No changes. The site matches the content." in text


async def test_invalid_content_is_a_problem_with_exit_1(example: Site) -> None:
    example.write("pages/about.yaml", "name: About\nbogus: 1\n")
    code, text = await status(example, output_format="json", detailed_exitcode=True)
    document = json.loads(text)
    assert code == 1
    assert document["ok"] is False
    assert document["problems"] == ["the content is invalid (1 problem(s))"]


async def test_a_held_page_is_shown_on_its_own_line(example: Site, sandbox: Sandbox) -> None:
    """Nothing held back is silent (issue 26 item 4): a page held by an editor's draft is named by ``status``."""
    assert not (await example.apply()).failed
    editor = Editor(sandbox)
    try:
        editor.edit("/about", approve=False, name="About us (draft)")
    finally:
        editor.close()
    example.edit("pages/about.yaml", "founded in 2014", "founded in 2015")
    code, text = await status(example, detailed_exitcode=True)
    assert code == 2
    assert "held:      page /about: refused: the page has an unapproved draft version" in text, text
    _, text = await status(example, output_format="json")
    [held] = json.loads(text)["drift"]["held"]
    assert (held["id"], held["reason"]) == ("page:/about", "foreign_draft")
