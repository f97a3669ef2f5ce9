"""The fast writer of new YAML files (cmssync/content/yaml_emit.py) against ruamel's round-trip dumper: whatever
the fast path writes is byte for byte what ruamel writes for the same data; what it cannot say it leaves to ruamel.
Every page of the every-block-type site: tests/e2e/test_pull_yaml_emit.py."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from ruamel.yaml.nodes import ScalarNode

from cmssync.content import writer, yaml_emit
from cmssync.content.yaml_emit import dump_fresh
from tests.support.yaml_text import ruamel_text

TRICKY = [
    'plain text', '', ' leading', 'trailing ', "it's", 'say "hi"', 'a: b', 'a #b', '#c', '- x', '-x', '? q', ': v',
    '123', '1.5', '0x1f', '1e3', 'true', 'True', 'yes', 'no', 'null', '~', 'NULL', '.inf', '.nan', '2020-01-01',
    '12:30', '<p>Block 1 of page 3.</p>', '${env:PASSWORD}', '$${literal}', 'x\ny\n', 'x\ny', 'x\n\ny\n',
    'x\ny\n\n', ' x\ny', 'x \ny', 'a\tb', 'tab\tin\nlines\n', 'back\\slash', 'café', '\xa0nbsp', 'emoji 😀',
    'bell\x07', 'nul\x00', 'bom\ufeff', 'line\u2028sep', 'nel\x85x', 'cr\rlf', '{a: b}', '[1, 2]', '*alias',
    '&anchor', '!tag', '%percent', '@at', '`tick', '|pipe', '>gt', 'a,b', 'a[b]', 'https://example.com/a?b=c#d',
    "'", '"', '\\', '<<', '=',
    "x" * 300, "word " * 900, "y" * 5000, "multi\n" + "z" * 4200 + "\n",
]  # fmt: skip


def test_every_tricky_string_as_key_value_list_item_and_placeholder_field() -> None:
    taken = 0
    for text in TRICKY:
        for data in (
            {"name": text},
            {text: "value"} if text else {"x": text},
            {"areas": {"Main": [text, {"type": "content", "value": {"content": text}}]}},
            {"areas": {"Main": [{"keep": {"type": text or "x", "id": 3}}]}},
            [{"username": text, "email": "a@b.c"}],
        ):
            fast = dump_fresh(data)
            if fast is not None:
                taken += 1
                assert fast == ruamel_text(data), (text, data)
    assert taken >= 4 * len(TRICKY) - 40  # the fast path writes nearly all of them


def test_the_shapes_of_a_page_file() -> None:
    page = {
        "name": "About",
        "type": "page",
        "template": "full",
        "public": True,
        "sort": 3,
        "attributes": {"meta_title": "About us", "exclude_nav": False, "empty": None, "tags": []},
        "areas": {
            "Main": [
                {"type": "content", "value": {"content": "<p>One</p>\n<p>Two</p>\n"}},
                {"keep": {"type": "gallery", "id": 104}},
                {"type": "image", "value": {"fID": "${file:images/logo.png}", "width": 0, "extra": {}}},
                None,
                {},
                "text",
            ],
            "Sidebar": [],
        },
    }
    assert dump_fresh(page) == ruamel_text(page)


def test_what_the_fast_path_leaves_to_ruamel() -> None:
    for data in ({"ratio": 1.5}, {"nested": [[1, 2]]}, {"k" * 200: 1}, {"long": "x " * 3000}, {}, [], "text"):
        assert dump_fresh(data) is None
        ruamel_text(data) if isinstance(data, dict | list) and data else None  # ruamel still writes it


keys = st.text(min_size=0, max_size=12)
texts = st.one_of(st.sampled_from(TRICKY), st.text(max_size=40), st.text(alphabet="ab \n:#'\"-", max_size=20))
scalars = st.one_of(texts, st.integers(-(10**12), 10**12), st.booleans(), st.none())
placeholders = st.fixed_dictionaries({"keep": st.fixed_dictionaries({"type": texts, "id": st.integers(0, 10**6)})})
values = st.recursive(
    st.one_of(scalars, placeholders),
    lambda inner: st.one_of(st.lists(st.one_of(scalars, st.dictionaries(keys, inner, max_size=3)), max_size=4),
                            st.dictionaries(keys, inner, max_size=4)),
    max_leaves=20,
)  # fmt: skip


@given(st.one_of(st.dictionaries(keys, values, min_size=1, max_size=5), st.lists(values, min_size=1, max_size=4)))
def test_generated_data_is_written_as_ruamel_writes_it(data: Any) -> None:
    fast = dump_fresh(data)
    if fast is not None:
        assert fast == ruamel_text(data)


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=30))
def test_a_text_taken_as_plain_at_sight_is_plain_for_ruamel(text: str) -> None:
    for candidate in (text, "<p>" + text, "a" + text, text + " x"):
        if yaml_emit._PLAIN.fullmatch(candidate):
            analysis = yaml_emit._ANALYZE(candidate)
            assert analysis.allow_block_plain, candidate
            assert str(yaml_emit._RESOLVE(ScalarNode, candidate, (True, False))) == yaml_emit._STR_TAG, candidate


def ruamel_edit(text: str, data: Any) -> str:
    """What ``writer.render_yaml`` wrote before its shortcut: ``data`` merged into the round-trip tree of ``text``."""
    yaml = writer._yaml()
    buffer = io.StringIO()
    yaml.dump(writer.merge(yaml.load(text), data), buffer)
    return buffer.getvalue()


@given(st.one_of(st.dictionaries(keys, values, min_size=1, max_size=5), st.lists(values, min_size=1, max_size=4)))
def test_a_file_holding_the_fresh_text_of_the_data_is_given_back_by_the_round_trip_edit(data: Any) -> None:
    """``render_yaml`` returns such a file's text as it is (a pull over unchanged content parses nothing)."""
    fast = dump_fresh(data)
    if fast is not None:
        assert ruamel_edit(fast, data) == fast


def test_render_yaml_edits_a_file_whose_data_or_text_differs(tmp_path: Path) -> None:
    target = tmp_path / "page.yaml"
    data = {"name": "About", "areas": {"Main": [{"type": "content", "value": {"content": "<p>x</p>"}}]}}
    target.write_text(dump_fresh(data) or "")
    assert writer.render_yaml(target, data) == target.read_text()
    target.write_text("# kept\n" + target.read_text())
    assert writer.render_yaml(target, data) == target.read_text()  # the comment keeps the round-trip edit
    changed = {**data, "name": "About us"}
    assert writer.render_yaml(target, changed) == "# kept\n" + (dump_fresh(changed) or "")


def test_a_placeholder_text_beginning_like_an_explicit_key_reads_back() -> None:
    """ruamel writes ``{type: ? q}`` in a flow mapping, which no reader takes back: such a text is quoted, fresh
    and when a file holding it is edited (found by the round-trip property below)."""
    data = [{"keep": {"type": "? q", "id": 0}}, {"keep": {"type": "?\tx", "id": 1}}, {"keep": {"type": ": v", "id": 2}}]
    text = ruamel_text(data)
    assert writer._yaml().load(text) == data
    assert "'? q'" in text
    assert ruamel_edit(text, data) == text
    assert dump_fresh(data) is None  # the fast path leaves it to the writer, which quotes it


def test_an_edit_keeps_a_top_level_lists_indentation(tmp_path: Path) -> None:
    """A file that is one list (users.yaml) written at the margin, as content-example's is, keeps it when one
    item changes: pull rewrote every line of it as ``  - username: …`` when a user's email changed."""
    target = tmp_path / "users.yaml"
    target.write_text("# our people\n- username: ann\n  email: ann@example.com\n  password: ${env:ANN_PW}\n")
    data = [{"username": "ann", "email": "ann.new@example.com", "password": "${env:ANN_PW}"}]
    assert writer.render_yaml(target, data) == (
        "# our people\n- username: ann\n  email: ann.new@example.com\n  password: ${env:ANN_PW}\n"
    )
