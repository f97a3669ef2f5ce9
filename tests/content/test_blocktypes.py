"""The block type table: every type declared once, in its own module, and read from there only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import cmssync
from cmssync.content.blocktypes import block_type, block_types, keep_reason
from cmssync.content.models import KNOWN_BLOCK_TYPES, PageSpec, block_model

PACKAGE = Path(cmssync.__file__).parent
SOURCES = [p for p in PACKAGE.rglob("*.py") if "emulator" not in p.relative_to(PACKAGE).parts]


def test_each_type_is_named_in_its_own_module_only() -> None:
    # Handles that are plain words ("content", "file") also name other things; a handle with "_" names only a type
    # (as a whole word: ``exclude_page_list`` is an attribute).
    for handle in (h for h in block_types() if "_" in h):
        word = re.compile(rf"\b{handle}\b")
        naming = sorted(str(p.relative_to(PACKAGE)) for p in SOURCES if word.search(p.read_text(encoding="utf-8")))
        assert naming == [f"content/blocktypes/{handle}.py"], handle


def test_modelled_types_have_models_built_from_their_fields() -> None:
    assert KNOWN_BLOCK_TYPES == ("content", "core_stack_display", "horizontal_rule", "html", "page_title")
    title = block_model("page_title").model_validate({"type": "page_title", "value": {"titleText": "Hi"}})
    assert (title.value.useCustomTitle, title.value.formatting) == (False, "h1")  # type: ignore[attr-defined]
    spec = PageSpec.model_validate({"name": "P", "areas": {"Main": [{"type": "horizontal_rule"}]}})
    assert isinstance(spec.areas["Main"][0], block_model("horizontal_rule"))


def test_a_stack_display_names_its_stack_by_the_handle_of_its_file() -> None:
    display = {"type": "core_stack_display", "value": {"stack": "footer-column-1/footer-column-1"}}
    spec = PageSpec.model_validate({"name": "P", "areas": {"Main": [display]}})
    assert spec.areas["Main"][0].value.stack == "footer-column-1/footer-column-1"  # type: ignore[union-attr]
    for wrong in ("Footer Column 1", "/footer", ""):
        with pytest.raises(ValueError, match="stack"):
            PageSpec.model_validate({"name": "P", "areas": {"Main": [{**display, "value": {"stack": wrong}}]}})
    assert keep_reason("core_stack_display", {}) == "the stack it shows cannot be told from the page's rendering"
    assert keep_reason("core_stack_display", {"why": "two stacks render the same"}) == "two stacks render the same"
    assert keep_reason("core_stack_display", {"stack": "{ccm:export:page:/!stacks/footer}"}) is None


def test_keep_reasons_come_from_the_table() -> None:
    layout = block_type("core_area_layout")
    assert layout is not None
    assert layout.holds_areas
    assert layout.uncreatable
    assert keep_reason("core_area_layout", {}) == layout.keep_reason
    assert keep_reason("hero_image", {"fID": "1"}) is None
    assert keep_reason("hero_image", []) == "the API reads this hero_image block without a value"
    assert keep_reason("marquee", {}) == "cmssync has not verified that marquee blocks round-trip through the API"


def test_an_uncreatable_type_cannot_be_written_raw() -> None:
    with pytest.raises(ValueError, match="Concrete answers 500"):
        PageSpec.model_validate({"name": "P", "areas": {"Main": [{"type": "core_container", "raw": True}]}})
