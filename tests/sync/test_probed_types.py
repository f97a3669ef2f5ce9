"""What a probe verdict means for pull (``cmssync.sync.probed_types``), and how the state keeps verdicts per site."""

from __future__ import annotations

import re
from typing import Any

import pytest

from cmssync.api.models import Block
from cmssync.errors import StateError
from cmssync.state.records import BlockTypeVerdict, State
from cmssync.sync.block_type_probe import _Found, _Refused, _round_trip
from cmssync.sync.probed_types import field_kinds, first_difference, keep_reason, unwritable

READ = {"heading": "Hi", "body": "", "showIcon": "1", "ratio": "0.5"}
SYMMETRIC = BlockTypeVerdict(symmetric=True, fields=field_kinds(READ), block_id=4, probed_at="2026-11-29T08:00:00Z")
REFUSED = BlockTypeVerdict(
    symmetric=False,
    fields={"title": "text"},
    reason="the site refused to write the copy back unchanged: Choose a time zone.",
    block_id=9,
    probed_at="2026-11-29T08:00:00Z",
)


def test_field_kinds_as_read() -> None:
    assert field_kinds(READ) == {"heading": "text", "body": "empty", "showIcon": "number", "ratio": "number"}


def test_a_type_never_probed_or_probed_asymmetric_is_kept_naming_the_command() -> None:
    never = keep_reason("callout", READ, None)
    assert never is not None
    assert "`cmssync probe-block-type callout`" in never
    refused = keep_reason("countdown", {"title": "x"}, REFUSED)
    assert refused is not None
    assert "Choose a time zone." in refused
    assert "`cmssync probe-block-type countdown` at 2026-11-29T08:00:00Z" in refused


def test_a_symmetric_type_is_written_unless_this_block_reads_otherwise() -> None:
    assert keep_reason("callout", {**READ, "heading": "Other words"}, SYMMETRIC) is None
    changed = keep_reason("callout", {**READ, "subtitle": "new column"}, SYMMETRIC)
    assert changed is not None
    assert "(subtitle)" in changed
    assert "run `cmssync probe-block-type callout` again" in changed
    reference = keep_reason("callout", {**READ, "heading": "{ccm:export:file:123:a.png}"}, SYMMETRIC)
    assert reference is not None
    assert "heading reads as a site reference ({ccm:export:file:123:a.png})" in reference


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ([], "without a value"),
        ({}, "without a value"),
        ({"items": ["a"]}, "items reads as a list"),
        ({"settings": {"a": 1}}, "settings reads as a map"),
        ({"page": "{ccm:export:page:/about}"}, "page reads as a site reference"),
    ],
)
def test_values_the_generic_form_cannot_write_back(value: object, why: str) -> None:
    assert why in (unwritable(value) or "")


def test_first_difference_compares_as_the_site_reads() -> None:
    assert first_difference({"n": 1, "flag": True, "none": None}, {"n": "1", "flag": "1", "none": ""}) is None
    assert first_difference({"a": "x"}, {"a": "y"}) == "field a was written as 'x' and reads back as 'y'"
    assert first_difference({"a": "x"}, {}) == "field a is not read back"
    assert first_difference({}, {"b": "2"}) == "field b is read back ('2') though it was not sent"


def test_verdicts_are_kept_per_site() -> None:
    state = State()
    state.bind_site("http://site.example", "/ccm/api/1.0")
    assert "block_types" not in state.model_dump(mode="json")["site"]  # a state without one reads as before
    state.record_block_type("callout", SYMMETRIC)
    again = State.model_validate_json(state.model_dump_json())
    again.bind_site("http://site.example/", "/ccm/api/1.0")
    assert again.site is not None
    assert again.site.block_types == {"callout": SYMMETRIC}
    with pytest.raises(StateError, match=r"not http://other\.example"):
        again.bind_site("http://other.example", "/ccm/api/1.0")
    again.bind_site("http://other.example", "/ccm/api/1.0", allow_other_site=True)
    assert again.site is not None
    assert again.site.block_types == {}  # another site's verdicts are not this one's


class _TrimmingSite:
    """A site whose block type stores its heading trimmed to 10 characters (its controller's save()), and logs what
    was asked of it: the unit edge of a read that differs from what was written, without refusing the write."""

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.deleted: list[int] = []

    async def add_block(self, page_id: int, area: str, *, type: str, value: dict[str, Any]) -> Block:
        number = len(self.blocks) + 100
        self.blocks[number] = {**value, "heading": str(value["heading"])[:10]}
        return Block(id=number, type=type, value=self.blocks[number])

    async def update_block(self, page_id: int, area: str, block_id: int, *, value: dict[str, Any]) -> Block:
        self.blocks[block_id] = {**value, "heading": str(value["heading"])[:10]}
        return Block(id=block_id, type="banner", value=self.blocks[block_id])

    async def get_block(self, block_id: int) -> Block:
        return Block(id=block_id, type="banner", value=self.blocks[block_id])

    async def delete_block(self, block_id: int) -> None:
        self.deleted.append(block_id)


@pytest.mark.parametrize(
    ("heading", "step", "deleted"),
    [
        ("Short one", "write the copy with heading changed: field heading was written as 'Short one (cmssync", [100]),
        ("A longer heading", "add a copy with the value read: field heading was written as 'A longer heading'", [100]),
    ],
)
async def test_a_copy_that_reads_back_otherwise_is_asymmetric_and_deleted(
    heading: str, step: str, deleted: list[int]
) -> None:
    site = _TrimmingSite()
    state = State()
    state.bind_site("http://site.example", "/ccm/api/1.0")
    state.record_probe_page(7)
    found = _Found(block_id=3, value={"heading": heading, "body": "x"}, page=None, pairs=[])
    with pytest.raises(_Refused, match=re.escape(f"the copy reads back differently after the request to {step}")):
        await _round_trip(site, state, "banner", found, [], lambda: None)  # type: ignore[arg-type]
    assert site.deleted == deleted  # the copy deleted, whatever step found the difference
