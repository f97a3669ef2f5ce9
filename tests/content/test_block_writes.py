"""What apply sends for the block types whose controllers read keys other than their columns, and how page-type
columns are compared and written (block-types.jsonl: without these keys a link or a mode is silently cleared)."""

from __future__ import annotations

import asyncio

import pytest

from cmssync.content.blocktypes import block_type
from cmssync.content.models import PageSpec
from cmssync.plan.block_form import BlockForm
from cmssync.plan.desired import Resolver
from cmssync.plan.normalize import normalize_block_value
from cmssync.plan.page_form import block_form, write_value
from cmssync.sync.page_type_numbers import PageTypeNumbers


def _write(handle: str, value: dict[str, object], pages: dict[str, int] | None = None) -> dict[str, object]:
    declared = block_type(handle)
    assert declared is not None
    assert declared.write is not None
    return declared.write(dict(value), (pages or {}).get)


def test_feature_sends_the_link_type_its_controller_keeps_links_by() -> None:
    assert _write("feature", {"internalLinkCID": "234", "externalLink": ""})["linkType"] == 1
    assert _write("feature", {"internalLinkCID": "0", "externalLink": "https://example.com"})["linkType"] == 2
    assert _write("feature", {"internalLinkCID": "", "externalLink": ""})["linkType"] == 0


@pytest.mark.parametrize(("handle", "prefix"), [("feature_link", "button"), ("hero_image", "button"), ("image", "")])
def test_link_columns_go_through_the_link_chooser(handle: str, prefix: str) -> None:
    page, file, url = (
        ("buttonInternalLinkCID", "buttonFileLinkID", "buttonExternalLink")
        if prefix
        else ("internalLinkCID", "fileLinkID", "externalLink")
    )
    chosen = _write(handle, {page: "234", file: "0", url: "", "imageLink__which": "none", "imageLink_none": ""})
    assert (chosen["imageLink__which"], chosen["imageLink_page"]) == ("page", 234)
    assert "imageLink_none" not in chosen
    assert _write(handle, {page: "0", file: "21", url: ""})["imageLink_file"] == 21
    assert _write(handle, {page: "", file: "", url: "https://x.test/"})["imageLink_external_url"] == "https://x.test/"
    assert _write(handle, {page: "0", file: "0", url: ""})["imageLink__which"] == "none"


def test_page_list_sends_its_topic_filter_and_no_parent_as_empty() -> None:
    written = _write("page_list", {"cParentID": "", "filterByRelated": "0", "filterByCustomTopic": "1"})
    assert (written["cParentID"], written["topicFilter"]) == ("", "custom")
    assert _write("page_list", {"cParentID": "0"})["cParentID"] == ""  # an int 0 would equal home's parent id
    other = _write("page_list", {"cParentID": "243", "filterByRelated": "1"})
    assert (other["cParentID"], other["cParentIDValue"]) == ("OTHER", 243)  # stored without the strict compare


def test_search_sends_modes_not_columns() -> None:
    written = _write(
        "search",
        {
            "baseSearchPath": "/about",
            "search_all": "0",
            "postTo_cID": "238",
            "resultsURL": "",
            "allow_user_options": "1",
        },
        {"/about": 234},
    )
    assert (written["baseSearchPath"], written["searchUnderCID"]) == ("OTHER", 234)
    assert (written["resultsPageKind"], written["allowUserOptions"]) == ("CID", "ALLOW")
    assert _write("search", {"baseSearchPath": "", "search_all": "1"})["baseSearchPath"] == "ALL"
    assert _write("search", {"resultsURL": "https://x.test/r", "postTo_cID": ""})["resultsPageKind"] == "URL"


def test_express_form_sends_no_redirect_as_zero() -> None:
    assert _write("express_form", {"redirectCID": ""})["redirectCID"] == "0"


def _page_list_block() -> BlockForm:
    spec = PageSpec.model_validate(
        {
            "name": "P",
            "areas": {"Main": [{"type": "page_list", "raw": True, "value": {"ptID": "blog_entry", "num": "3"}}]},
        }
    )
    return block_form(spec.areas["Main"][0])


def test_a_page_type_column_compares_in_export_form_and_writes_the_id() -> None:
    block = _page_list_block()
    resolver = Resolver(file_urls={}, file_ids={}, page_ids={}, strict=True)
    assert write_value(block, resolver)["ptID"] == "{ccm:export:pagetype:blog_entry}"
    writing = Resolver(
        file_urls={}, file_ids={}, page_ids={}, strict=True, mode="write", page_type_numbers={"blog_entry": 7}
    )
    sent = write_value(block, writing)
    assert (sent["ptID"], sent["topicFilter"]) == ("7", "")
    with pytest.raises(LookupError, match="blog_entry"):
        write_value(block, Resolver(file_urls={}, file_ids={}, page_ids={}, strict=True, mode="write"))


def test_mirror_keys_are_not_compared() -> None:
    live = {"fID": "1", "imageLink__which": "page", "imageLink_page": "234", "altText": "A"}
    assert normalize_block_value("image", live, base_url="http://x") == {"fID": "1", "altText": "A"}


def test_page_type_ids_are_probed_once_up_to_the_first_failure() -> None:
    handles = {1: "core_stack", 2: "page", 3: "blog_entry"}
    calls: list[int] = []

    async def probe(number: int) -> str | None:
        calls.append(number)
        return "{ccm:export:pagetype:" + handles[number] + "}" if number in handles else None

    async def make() -> object:
        return probe

    numbers = PageTypeNumbers()
    assert asyncio.run(numbers.learn({"blog_entry"}, make)) == set()  # type: ignore[arg-type]
    assert numbers.known == {"core_stack": 1, "page": 2, "blog_entry": 3}
    assert asyncio.run(numbers.learn({"resource"}, make)) == {"resource"}  # type: ignore[arg-type]
    assert calls == [1, 2, 3, 4]
