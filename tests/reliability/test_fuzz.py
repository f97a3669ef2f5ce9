"""No input gives a traceback (issue 29 item 8): generated content files, settings files and plan files go through the
loader and through the command line (``validate``, ``show``); every outcome is a result or a located refusal.

The generators aim at what broke before: YAML punctuation in random order, escapes (``\\ud800``), integers of
thousands of digits, impossible dates, deep and wide structures under the keys the content format knows.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cmssync.content.loader import load_content
from cmssync.errors import CmsSyncError, ContentError
from tests.reliability.cli import run_cli
from tests.support.reliability_report import ReliabilityReport

KEYS = [
    "name",
    "description",
    "areas",
    "Main",
    "type",
    "value",
    "content",
    "attributes",
    "id",
    "keep",
    "handle",
    "site",
    "url",
    "state",
    "auth",
    "grant",
    "folders",
    "prune",
    "publish",
    "protect",
    "pages",
    "users",
    "html",
    "username",
    "email",
    "password",
    "template",
    "publish_end_date",
    "on_conflict",
    "ignore",
    "run_timeout",
]
PUNCTUATION = [
    *":-{}[],&*!|>'\"#%@`?\\.\n \t",
    "\\ud800",
    "\\U0010ffff",
    "${env:X}",
    "${file:a.png}",
    "0x",
    "9" * 50,
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.integers(min_value=4000, max_value=5000).map(lambda digits: f"<big {digits}>"),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["2024-02-30", "2024-13-01", "\\ud83d", "http://127.0.0.1:99999", "-", "~", "<script>"]),
)
TREES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=30,
)


def yaml_of(tree: Any) -> str:
    """JSON is YAML; ``<big N>`` becomes an integer of N digits, written bare (Python cannot make it an int)."""
    return re.sub(r'"<big (\d+)>"', lambda found: "9" * int(found.group(1)), json.dumps(tree, allow_nan=True))


TEXTS = st.one_of(
    TREES.map(yaml_of),
    st.lists(st.sampled_from(PUNCTUATION + KEYS), max_size=40).map("".join),
    st.text(max_size=200),
)

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def write_site(root: Path, page: str, config: str | None) -> None:
    (root / "pages").mkdir(parents=True, exist_ok=True)
    (root / "pages" / "index.yaml").write_text(page, encoding="utf-8", errors="surrogatepass")
    (root / "cmssync.yaml").write_text(
        config if config is not None else 'site: {url: "http://127.0.0.1:9"}\n', encoding="utf-8"
    )


@FUZZ
@given(page=TEXTS, config=st.none() | TEXTS)
def test_the_loader_answers_any_content_with_the_content_or_located_problems(
    page: str, config: str | None, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("fuzz")
    write_site(root, page, config)
    assert outcome_of(root) in ("loaded", "located problems", "settings error")


def outcome_of(root: Path) -> str:
    try:
        load_content(root)
    except ContentError as exc:
        return "located problems" if exc.problems else "a content error without problems"
    except CmsSyncError as exc:  # a settings error of its own kind (ConfigError): a message, not a traceback
        return "settings error" if str(exc) else "an error without a message"
    return "loaded"


@FUZZ
@given(page=TEXTS, plan=TEXTS)
def test_the_command_line_never_shows_a_traceback(
    page: str,
    plan: str,
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    reliability_report: ReliabilityReport,
) -> None:
    root = tmp_path_factory.mktemp("fuzz")
    write_site(root, page, None)
    plan_file = root / "plan.json"
    plan_file.write_text(plan, encoding="utf-8", errors="surrogatepass")
    for args in (("validate", str(root)), ("show", str(plan_file))):
        result = run_cli(capsys, *args)
        reliability_report.add(cases_tried=1)
        assert result.code in (0, 1, 2), (args, result.text)
        assert "Traceback" not in result.text, (args, result.text)
