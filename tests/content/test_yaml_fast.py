"""The C fast path (cmssync/yamlread/fast.py) against the round-trip reader: whatever the fast path accepts, the
round-trip reader accepts too, with the same data, the same types and the same positions; whatever it is unsure
about is read round-trip, so every refusal keeps the round-trip reader's message."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cmssync.errors import Problem
from cmssync.yamlread import YamlList, YamlMap, fast, parse_located, parse_yaml
from cmssync.yamlread.located import from_roundtrip
from cmssync.yamlread.roundtrip import load_roundtrip

REPO = Path(__file__).resolve().parents[2]

needs_c = pytest.mark.skipif(not fast.AVAILABLE, reason="ruamel.yaml.clib is not installed")


def difference(fast_tree: Any, roundtrip_tree: Any, path: tuple[Any, ...] = ()) -> str | None:
    """Where two located trees differ (data, type or position), or ``None``."""
    a, b = fast_tree, roundtrip_tree
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} {a!r} vs {type(b).__name__} {b!r}"
    if isinstance(a, YamlMap):
        if (a.start, list(a), a.at) != (b.start, list(b), b.at):
            return f"{path}: {a.start} {a.at} vs {b.start} {b.at}"
        return next((d for key in a if (d := difference(a[key], b[key], (*path, key)))), None)
    if isinstance(a, YamlList):
        if (a.start, a.at) != (b.start, b.at):
            return f"{path}: {a.start} {a.at} vs {b.start} {b.at}"
        return next((d for i, (x, y) in enumerate(zip(a, b, strict=True)) if (d := difference(x, y, (*path, i)))), None)
    both_nan = isinstance(a, float) and math.isnan(a) and math.isnan(b)
    return None if a == b or both_nan or repr(a) == repr(b) else f"{path}: {a!r} vs {b!r}"


def verdict(text: str) -> str:
    """``unsure``, ``same``, or what differs between the two readers."""
    roundtrip = load_roundtrip(text, "x.yaml")
    try:
        tree = fast.compose(text)
    except fast.Unsure:
        return "unsure"
    except fast.TooLarge as exc:  # refused by both readers, at the same place, in the same words
        refused = Problem("x.yaml", exc.line, exc.column, exc.message)
        return "same" if roundtrip == refused else f"the readers refuse differently: {refused} / {roundtrip}"
    if isinstance(roundtrip, Problem):
        return f"the fast path accepted what the round-trip reader refuses: {roundtrip}"
    return difference(tree, from_roundtrip(roundtrip)) or "same"


def repository_yaml() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "*.yaml", "*.yml"], cwd=REPO, capture_output=True, text=True, check=False
    ).stdout.split()
    return [REPO / name for name in listed if (REPO / name).is_file()]


@needs_c
def test_every_yaml_file_of_the_repository_reads_the_same() -> None:
    files = repository_yaml()
    assert len(files) > 50
    texts = {path.relative_to(REPO).as_posix(): path.read_bytes().decode("utf-8", "replace") for path in files}
    verdicts = {name: verdict(text.removeprefix("\ufeff")) for name, text in texts.items()}
    assert {name: v for name, v in verdicts.items() if v not in ("same", "unsure")} == {}
    assert sum(v == "same" for v in verdicts.values()) > len(files) // 2


EDGE_CASES = [
    "",
    "# only a comment\n",
    "---\n",
    "name: Home\n",
    "name:\ndescription: x\n",
    "a:\n  b:\nc: 1\n",
    "a:\n  - x\n  -\n  - y\n",
    "a: # comment\n  b: 1\n",
    "a:   # comment\nb: 2\n",
    "a:\n\n\n# gap\nb:\n",
    "a: 'it''s'\nb: \"tab\\there\"\nc: |\n  one\n  two\nd: >-\n  folded\n  text\n",
    "n: [1, 0o17, 0x1f, 1_000, 1.5, .inf, -.nan, 1e3, +1, 017, 2027-01-31, 2027-01-31T18:00:00Z]\n",
    "b: [true, True, TRUE, false, yes, no, on, off, ~, null, Null, '']\n",
    "k: {a: 1, b: [x, {c: d}], e: }\n",
    "? complex\n: value\n",
    "a: b\r\nc: d\r\n",
    "a: b\rc: d\r",
    'é: ünïcödé 🎉\nx: "\\u263A"\n',
    "- a\n- b: c\n  d: e\n- - nested\n",
    "<<: {a: 1}\n",
    "'<<': 1\n",
    "=: 1\n",
    "a: =\n",
    "%YAML 1.1\n---\na: yes\n",
    "a: 1\n---\nb: 2\n",
    "a: 1\na: 2\n",
    "1: a\n1.0: b\n",
    "a: &x 1\nb: *x\n",
    "a: !!str 1\n",
    "a:\tb\n",
    "a: [b\n",
    "a: b: c\n",
    "key: value\n  bad: indent\n",
    "[" * 70 + "]" * 70 + "\n",
    "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 70)),
    "\ufeffa: 1\n",
    "a: '\ufeff'\n",
    "a: \x85b\n",
    "text: |\n  ${file:images/a.png}\n  $${literal}\n",
]


@needs_c
@pytest.mark.parametrize("text", EDGE_CASES)
def test_edge_cases_read_the_same_or_go_round_trip(text: str) -> None:
    assert verdict(text) in ("same", "unsure")


@pytest.mark.parametrize("text", EDGE_CASES)
def test_refusals_have_the_round_trip_readers_message(text: str) -> None:
    located, roundtrip = parse_located(text, "f.yaml"), parse_yaml(text, "f.yaml")
    assert isinstance(located, Problem) == isinstance(roundtrip, Problem)
    if isinstance(located, Problem):
        assert located == roundtrip
    else:
        assert not isinstance(roundtrip, Problem)
        assert difference(located.data, from_roundtrip(roundtrip.data)) is None


# --- generated documents ------------------------------------------------------------------------------------------

_PLAIN = st.sampled_from(
    ["a", "name", "Home", "x y", "0", "12", "-3", "1.5", "1e3", ".5", "0o7", "0x1F", "1_0", "true", "False",
     "yes", "null", "~", "2027-01-31", "2027-01-31 18:00", "a:b", "a#b", "-a", "?x", "é", "${file:a.png}",
     "http://x/y?z=1", "1:2", "3.", "+.inf", ".NaN", "0b11"]
)  # fmt: skip
_SCALAR = st.one_of(
    _PLAIN,
    _PLAIN.map(lambda s: f"'{s}'"),
    _PLAIN.map(lambda s: f'"{s}"'),
    st.just(""),
    st.just("''"),
    st.just('"\\u263A \\n"'),
)
_COMMENT = st.sampled_from(["", "", "", "  # note", " #x"])
_KEY = st.sampled_from(["a", "b", "name", "'q'", '"d"', "1", "true", "null", "é", "k k", "x-y"])


@st.composite
def _block(draw: st.DrawFn, indent: int = 0, depth: int = 0) -> str:
    pad = " " * indent
    kind = draw(st.sampled_from(["map", "seq"] if depth < 3 else ["map"]))
    lines: list[str] = []
    for index in range(draw(st.integers(1, 4))):
        child = draw(st.sampled_from(["scalar", "scalar", "block", "flow", "literal"] if depth < 3 else ["scalar"]))
        head = f"{pad}{draw(_KEY)}{index}:" if kind == "map" else f"{pad}-"
        comment = draw(_COMMENT)
        if child == "scalar":
            value = draw(_SCALAR)
            lines.append(f"{head} {value}{comment}".rstrip() if value or not comment else f"{head}{comment}")
        elif child == "flow":
            items = draw(st.lists(st.one_of(_SCALAR, st.builds(lambda k, v: f"{k}: {v}", _KEY, _SCALAR)), max_size=3))
            lines.append(f"{head} [{', '.join(items)}]{comment}")
        elif child == "literal":
            style = draw(st.sampled_from(["|", ">", "|-", ">+", "|2"]))
            body = draw(st.lists(st.sampled_from(["text", "", "  more", "<p>x</p>", "# not a comment"]), max_size=3))
            lines.append(f"{head} {style}{comment}")
            lines.extend(f"{pad}  {line}" if line else "" for line in body)
        else:
            lines.append(f"{head}{comment}")
            if draw(st.booleans()):
                lines.append(f"{pad}  # a comment line")
            lines.append(draw(_block(indent + 2, depth + 1)))
        if draw(st.integers(0, 5)) == 0:
            lines.append("")
    return "\n".join(lines)


@needs_c
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_block(), st.sampled_from(["\n", "\r\n", ""]))
def test_generated_documents_read_the_same(body: str, end: str) -> None:
    text = body.replace("\n", end or "\n") + end
    assert verdict(text) in ("same", "unsure"), text


_FRAGMENTS = [
    "a: b\n",
    "key:\n- x\n- y\n",
    "key:\n  - x\n  -\n",
    "plain: one\n  two\n  three\n",
    'quoted: "one\n  two"\n',
    "single: 'one\n\n  two'\n",
    "? explicit\n: value\n",
    "? [a, b]\n: value\n",
    "flow: {a: [1, {b: c}], d: }\n",
    "flow: [a, b: c, {d}]\n",
    "---\n",
    "...\n",
    "# comment\n",
    "empty:\n",
    "empty: # note\n",
    "  indented: x\n",
    "- item\n",
    "- a: 1\n  b: 2\n",
    "block: |+\n  kept\n\n",
    "folded: >\n  a\n  b\n\n  c\n",
    "num: 0x_1\n",
    "date: 2027-1-3\n",
    "time: 12:30:45\n",
    "url: http://a.b/c#d\n",
    "colon: a:b\n",
    "sp: 'a' # c\n",
    "ws: x   \n",
    "key with spaces: v\n",
    '"quoted key": v\n',
    "nul: null\n",
    "bom: \ufeff\n",
    "unicode: \u00e9\u263a\n",
]


@needs_c
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=6), st.booleans())
def test_documents_of_odd_fragments_read_the_same(fragments: list[str], final_break: bool) -> None:
    text = "".join(fragments)
    text = text if final_break else text.rstrip("\n")
    assert verdict(text) in ("same", "unsure"), text


# --- the loader with and without the C parser ---------------------------------------------------------------------

CORPUS = REPO / "tests" / "content" / "invalid"


def _load_everything() -> list[object]:
    """What the loader makes of the example content and of every invalid case: specs with their sources, or
    problems."""
    from cmssync.content.loader import load_content
    from cmssync.errors import ContentError

    outcomes: list[object] = []
    for root in [REPO / "content-example", *sorted(p for p in CORPUS.iterdir() if p.is_dir())]:
        try:
            content = load_content(root)
        except ContentError as exc:
            outcomes.append([str(problem) for problem in exc.problems])
            continue
        specs = [*content.pages.values(), *content.users.values(), *content.of("group").values()]
        outcomes.append([content.digest(), [str(spec.source) for spec in specs]])
    return outcomes


@needs_c
def test_the_loader_gives_the_same_without_the_c_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    with_c = _load_everything()
    monkeypatch.setattr(fast, "CParser", None)
    assert _load_everything() == with_c


@needs_c
def test_both_readers_refuse_too_many_keys_at_the_same_place() -> None:
    """(Values per file are counted the same way; 100,000 of them take the round-trip reader 20 s to reach.)"""
    text = "a:\n" + "".join(f"  k{n}: 1\n" for n in range(1001))
    assert verdict(text) == "same"
    assert isinstance(load_roundtrip(text, "x.yaml"), Problem)
