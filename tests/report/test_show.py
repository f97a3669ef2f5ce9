"""``cmssync show PLANFILE`` in every format, and a saved plan applied without a second prompt."""

from __future__ import annotations

import base64
import io
import json
import shutil
from pathlib import Path

import pytest

from cmssync.cli import main
from cmssync.commands.apply import run_apply
from cmssync.content.loader import load_content
from cmssync.emulator.embedded import Sandbox
from cmssync.plan.actions import Action, FieldChange, Plan
from cmssync.plan.asset_forms import FileForm
from cmssync.sync.applying import ApplyRequest
from cmssync.sync.plan_files import write_plan_file
from cmssync.sync.planning import make_plan
from cmssync.sync.uploads import sha256_of
from tests.report.markup import read
from tests.report.scenario import png, workspace
from tests.support.plans import content_update

PLAN = Plan(
    site="https://www.example.org",
    content_digest="sha256:" + "2" * 64,
    actions=(
        Action(kind="file", key="images/new.png", op="create"),
        Action(
            kind="page",
            key="/about",
            op="update",
            changes=(FieldChange(field="name", before="About", after="About us"),),
            blocks=(
                content_update(
                    3,
                    {"content": "<p>Old words.</p>"},
                    {"content": '<p>New words.</p><img src="${file:images/new.png}">'},
                ),
            ),
        ),
    ),
)


@pytest.fixture
def plan_file(tmp_path: Path) -> Path:
    path = tmp_path / "plan.json"
    write_plan_file(PLAN, path)
    return path


@pytest.mark.parametrize(
    ("output_format", "expected"),
    [
        ("text", "~ page /about: update"),
        ("json", '"key": "/about"'),
        ("markdown", "`/about`"),
        ("html", "<code>/about</code>"),
    ],
)
def test_show_renders_a_saved_plan_in_every_format(
    plan_file: Path, output_format: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", str(plan_file), "--format", output_format]) == 0
    out = capsys.readouterr().out
    assert expected in out
    if output_format == "json":
        assert json.loads(out)["actions"][1]["id"] == "page:/about"


def test_show_html_inlines_new_images_from_the_content_dir(
    plan_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    content = tmp_path / "site"
    (content / "files/images").mkdir(parents=True)
    (content / "files/images/new.png").write_bytes(png(4, 4, (0, 0, 255)))
    (content / "files/secret.png").write_bytes(png(1, 1, (0, 0, 0)))
    assert main(["show", str(plan_file), "--format", "html"]) == 0
    without = read(capsys.readouterr().out).data["images"]["images/new.png"]
    assert without.startswith("data:image/svg+xml")  # a placeholder naming the file
    assert main(["show", str(plan_file), "--format", "html", "--content", str(content)]) == 0
    inlined = read(capsys.readouterr().out).data["images"]
    assert inlined["images/new.png"].startswith("data:image/png;base64,")


def test_show_html_inlines_new_images_from_the_plan_file_s_own_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image = png(4, 4, (0, 128, 0))
    form = FileForm(sha256=sha256_of(image), size=len(image))
    upload = Action(kind="file", key="images/new.png", op="create", file=form)
    plan = PLAN.model_copy(update={"actions": (upload, *PLAN.actions[1:])})
    content = tmp_path / "site"
    (content / "files/images").mkdir(parents=True)
    (content / "files/images/new.png").write_bytes(image)
    (content / "cmssync.yaml").write_text("site: {url: 'https://www.example.org'}\n")
    saved = tmp_path / "plan.json"
    write_plan_file(plan, saved, load_content(content))
    shutil.rmtree(content)
    assert main(["show", str(saved), "--format", "html"]) == 0
    assert read(capsys.readouterr().out).data["images"]["images/new.png"].startswith("data:image/png;base64,")
    document = json.loads(saved.read_text())
    document["blobs"][form.sha256] = base64.b64encode(png(4, 4, (255, 0, 0))).decode()  # not the reviewed bytes
    saved.write_text(json.dumps(document))
    assert main(["show", str(saved), "--format", "html"]) == 0
    assert read(capsys.readouterr().out).data["images"]["images/new.png"].startswith("data:image/svg+xml")


def test_show_refuses_what_is_not_a_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "plan.json"
    bad.write_text('{"site": 1}')
    assert main(["show", str(bad)]) == 1
    assert f"{bad}: not a cmssync plan file" in capsys.readouterr().err


async def test_a_saved_plan_applies_without_asking(tmp_path: Path, sandbox: Sandbox) -> None:
    root = tmp_path / "site"
    (root / "pages").mkdir(parents=True)
    (root / "pages/reviewed.yaml").write_text("name: Reviewed\n")
    planned = workspace(root, sandbox)
    plan = (await make_plan(planned)).plan
    saved = tmp_path / "plan.json"
    write_plan_file(plan, saved, planned.content)

    out = io.StringIO()
    asked: list[bool] = []
    code = await run_apply(
        workspace(root, sandbox), ApplyRequest(plan_file=saved), out=out, ask=lambda: asked.append(True) or False
    )
    assert (code, asked) == (0, [])
    assert "Apply complete: 1 succeeded" in out.getvalue()
    assert not (await make_plan(workspace(root, sandbox))).plan.has_changes


async def test_without_a_plan_file_apply_still_needs_yes_or_a_terminal(tmp_path: Path, sandbox: Sandbox) -> None:
    root = tmp_path / "site"
    (root / "pages").mkdir(parents=True)
    (root / "pages/unreviewed.yaml").write_text("name: Unreviewed\n")
    with pytest.raises(Exception, match="no terminal to ask on; pass --yes"):
        await run_apply(workspace(root, sandbox), ApplyRequest(), out=io.StringIO(), ask=None)
    declined = await run_apply(workspace(root, sandbox), ApplyRequest(), out=io.StringIO(), ask=lambda: False)
    assert declined == 1
