"""One YAML reader, one parser state per file (issue 15 item 8, issue 13 item 5).

An over-deep file used to leave ruamel's shared depth counter raised, so every file read after it failed "nested
too deeply". Tags were read as constructors' instructions instead of being refused. ``cmssync.yaml`` had a reader
of its own that allowed tags. Each case checks the located message, and that the other files are read normally.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cmssync.config import load_settings
from cmssync.content.loader import load_content
from cmssync.errors import ContentError
from tests.support.reliability_report import ReliabilityReport

DEEP = "name: Deep\ndescription: " + "[" * 80 + "]" * 80 + "\n"
PAGE = "name: Page {}\nareas:\n  Main:\n    - type: content\n      value: {{content: <p>Text</p>}}\n"
SITE = "site:\n  url: https://example.com\n"


def write_site(root: Path, pages: dict[str, str], config: str = SITE) -> None:
    (root / "pages").mkdir(parents=True)
    (root / "cmssync.yaml").write_text(config, encoding="utf-8")
    for name, text in pages.items():
        (root / "pages" / name).write_text(text, encoding="utf-8")


def problems(root: Path) -> list[str]:
    with pytest.raises(ContentError) as caught:
        load_content(root)
    return [str(problem) for problem in caught.value.problems]


@pytest.mark.parametrize("bad", ["a-deep.yaml", "m-deep.yaml", "z-deep.yaml"])
def test_one_over_deep_file_does_not_poison_the_others(
    bad: str, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    good = {f"{letter}-page.yaml": PAGE.format(letter) for letter in "bnx"}
    write_site(tmp_path, {"index.yaml": "name: Home\n", **good, bad: DEEP})
    found = problems(tmp_path)
    reliability_report.add(cases_tried=1)
    assert found == [f"pages/{bad}:2:77: invalid YAML: nested too deeply (at most 64 levels)"]


def test_after_an_over_deep_file_the_same_process_reads_good_files(tmp_path: Path) -> None:
    bad, good = tmp_path / "bad", tmp_path / "good"
    write_site(bad, {"index.yaml": DEEP})
    write_site(good, {"index.yaml": "name: Home\n", "about.yaml": PAGE.format("About")})
    for _ in range(3):
        assert problems(bad)
    assert load_content(good).pages["/about"].name == "Page About"


@pytest.mark.parametrize(
    ("text", "where", "tag"),
    [
        ("name: !!str Home\n", "1:7", "!!str"),
        ("name: Home\ndescription: !include secret.txt\n", "2:14", "!include"),
        ("name: Home\nareas: !!map\n  Main: []\n", "2:8", "!!map"),
        ("name: Home\nareas:\n  Main: !!python/object:os.system [ls]\n", "3:9", "!!python/object:os.system"),
    ],
)
def test_tags_are_refused_at_their_position(
    text: str, where: str, tag: str, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    write_site(tmp_path, {"index.yaml": text, "about.yaml": "name: About\n"})
    found = problems(tmp_path)
    reliability_report.add(cases_tried=1)
    assert found == [
        f"pages/index.yaml:{where}: tags are not allowed in content files (found {tag}); write the value plainly"
    ]


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (SITE + "concurrency: !!int 4\n", "cmssync.yaml:3:14: tags are not allowed in cmssync.yaml (found !!int)"),
        (SITE + "x: &a [1]\n", "cmssync.yaml:3:4: anchors and aliases (&name, *name) are not allowed in cmssync.yaml"),
        (SITE + "timeout: " + "[" * 80 + "]" * 80 + "\n", "cmssync.yaml:3:73: invalid YAML: nested too deeply"),
    ],
)
def test_the_settings_file_is_read_by_the_same_reader(
    config: str, expected: str, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    (tmp_path / "cmssync.yaml").write_text(config, encoding="utf-8")
    with pytest.raises(ContentError) as caught:
        load_settings(tmp_path, secrets_dir=None)
    reliability_report.add(cases_tried=1)
    assert str(caught.value.problems[0]).startswith(expected), str(caught.value)
    (tmp_path / "cmssync.yaml").write_text(SITE, encoding="utf-8")
    assert load_settings(tmp_path, secrets_dir=None).site.url == "https://example.com"
