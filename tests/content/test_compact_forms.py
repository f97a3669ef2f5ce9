"""The compact forms a large site is held in (``cmssync.memory``): equal sets of given fields and equal area shapes
are one object, the state's page records are validated one at a time, the content digest is hashed page by page —
and every one of them round-trips to what the plain form gives."""

from __future__ import annotations

import hashlib
import json
import pickle
from dataclasses import replace
from typing import Any

import pytest

from cmssync import memory
from cmssync.content.loader import load_content
from cmssync.content.models import Location, PageSpec
from cmssync.errors import StateError
from cmssync.memory import shared
from cmssync.state.records import PageRecord, State, validated_state
from tests.support.sites import EXAMPLE

PAGE = {
    "name": "About",
    "type": "page",
    "areas": {"Main": [{"type": "content", "value": {"content": "<p>One ${page-link:/}</p>"}}]},
}
RECORD: dict[str, Any] = {
    "id": 7,
    "digest": "sha256:" + "a" * 64,
    "live_version_id": 3,
    "base": {
        "fields": {"name": "About"},
        "areas": {"Main": {"shape": [["content", "content"]], "digest": "sha256:" + "b" * 64}},
    },
}


def test_specs_share_their_set_of_given_fields_and_round_trip_through_the_parse_cache_form() -> None:
    first, second = PageSpec.model_validate(PAGE), PageSpec.model_validate({**PAGE, "name": "Other"})
    unpickled = pickle.loads(pickle.dumps(first))

    assert first.model_fields_set is second.model_fields_set is unpickled.model_fields_set
    assert unpickled == first
    assert unpickled.model_dump(mode="json") == first.model_dump(mode="json")
    assert unpickled.model_dump(exclude_unset=True, mode="json") == json.loads(json.dumps(PAGE))
    block = first.areas["Main"][0]
    assert block.model_fields_set is pickle.loads(pickle.dumps(block)).model_fields_set


def test_a_copy_of_a_spec_with_changes_has_its_own_set() -> None:
    spec = PageSpec.model_validate(PAGE)
    changed = spec.model_copy(update={"description": "Changed"})

    assert changed.model_fields_set == {"name", "type", "areas", "description"}
    assert spec.model_fields_set == {"name", "type", "areas"}  # the shared set is left as it was
    assert PageSpec.model_validate(PAGE).model_fields_set == {"name", "type", "areas"}


def test_shared_gives_one_object_for_equal_values() -> None:
    shape = (("content", "content"),)
    copy = tuple(tuple(part) for part in json.loads(json.dumps(shape)))
    assert copy is not shape
    assert shared(copy) is shared(shape) == shape


def test_state_records_share_their_shapes_and_sets_and_equal_the_whole_document_validated_at_once() -> None:
    raw = {"format_version": 1, "pages": {"/a": RECORD, "/b": {**RECORD, "id": 8}}}
    state = validated_state(json.loads(json.dumps(raw)), "state.json")

    a, b = state.pages["/a"], state.pages["/b"]
    assert a.base is not None
    assert b.base is not None
    assert a.base.areas["Main"].shape is b.base.areas["Main"].shape
    assert a.model_fields_set is b.model_fields_set
    assert state == State.model_validate(json.loads(json.dumps(raw)))
    assert state.model_dump(mode="json") == State.model_validate(raw).model_dump(mode="json")
    assert isinstance(a, PageRecord)


def test_an_invalid_page_record_among_valid_ones_is_named_as_before() -> None:
    raw = {"format_version": 1, "pages": {"/a": RECORD, "/b": {**RECORD, "id": "nope"}, "/c": RECORD}}
    with pytest.raises(StateError, match=r"^state\.json: the state is invalid: pages\./b\.id: Input should be a valid"):
        validated_state(raw, "state.json")


def test_a_location_is_compared_and_shown_as_before() -> None:
    where = Location(file="pages/about.yaml", line=3, column=5)
    assert str(where) == "pages/about.yaml:3:5"
    assert where == Location("pages/about.yaml", 3, 5) != Location("pages/about.yaml")
    assert where.problem("bad").message == "bad"
    assert hash(Location("x")) == hash(Location(file="x", line=1, column=1))


@pytest.mark.parametrize("pages", ["all", "none", "one"])
def test_the_content_digest_hashed_page_by_page_is_that_of_the_whole_dump(pages: str) -> None:
    content = load_content(EXAMPLE)
    if pages == "none":
        content = replace(content, pages={})
    elif pages == "one":
        content = replace(content, pages={"/über": next(iter(content.pages.values()))})
    text = json.dumps(content.canonical(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert content.digest() == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_the_tables_of_shared_values_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "MAX_DISTINCT", 3)
    monkeypatch.setattr(memory, "_VALUES", {})
    kept = [shared(("shape", str(n))) for n in range(10)]
    assert len(memory._VALUES) <= 3
    assert shared(("shape", "9")) is kept[9]
    assert kept == [("shape", str(n)) for n in range(10)]


def test_a_pickled_spec_keeps_its_values_its_given_fields_and_its_source_with_the_class_field_names() -> None:
    spec = PageSpec.model_validate({**PAGE, "protect": False})
    spec.located(Location("pages/about.yaml", 2, 3))
    unpickled = pickle.loads(pickle.dumps(spec, protocol=pickle.HIGHEST_PROTOCOL))

    assert unpickled == spec
    assert unpickled.source == Location("pages/about.yaml", 2, 3)
    assert unpickled.model_fields_set == {"name", "type", "areas", "protect"}
    assert unpickled.model_fields_set is PageSpec.model_validate({**PAGE, "protect": True}).model_fields_set
    assert all(a is b for a, b in zip(unpickled.__dict__, PageSpec.model_fields, strict=True))
    assert unpickled.model_dump(mode="json") == spec.model_dump(mode="json")
    assert pickle.loads(pickle.dumps(PageSpec.model_validate(PAGE))).source is None


def test_a_model_not_in_the_plain_validated_form_is_pickled_in_pydantics_form() -> None:
    partial = PageSpec.model_construct(name="Partial")
    object.__setattr__(partial, "__dict__", {"name": "Partial"})  # fields missing from its dict
    unpickled = pickle.loads(pickle.dumps(partial))
    assert unpickled.__dict__ == partial.__dict__
    assert unpickled.model_fields_set == {"name"}
