"""Block values as a real Concrete 9.3.1 site handles them (recorded in ``blocks.jsonl``; see ``markup.py``,
``blockvalues.py``, ``blockexport.py``): export form on read, stored form on write, file columns, layouts and
containers, multi-record blocks, sub-areas, drafts behind batched reads, generated handles, groups."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from cmssync.emulator.embedded import Sandbox
from tests.emulator.helpers import client, token


def _page(api: httpx.Client, name: str, parent: int = 1, page_type: str = "page") -> dict[str, Any]:
    body = {"parent": parent, "name": name, "type": page_type, "template": "full"}
    page: dict[str, Any] = api.post("/pages", json=body).json()["data"]
    return page


def _add(api: httpx.Client, page: int, block_type: str, value: Any, **kwargs: Any) -> httpx.Response:
    return api.post(f"/pages/{page}/Main", json={"type": block_type, "value": value}, **kwargs)


def _content(api: httpx.Client, page: int, html: str) -> str:
    content: str = _add(api, page, "content", {"content": html}).json()["data"]["value"]["content"]
    return content


def _files(api: httpx.Client) -> dict[str, dict[str, Any]]:
    return {f["url"].rsplit("/", 1)[1]: f for f in api.get("/files", params={"limit": 100}).json()["data"]}


def _export(file: dict[str, Any]) -> str:
    prefix = file["url"].split("/application/files/")[1].rsplit("/", 1)[0].replace("/", "")
    return f"{{ccm:export:file:{prefix}:{file['url'].rsplit('/', 1)[1]}}}"


def _approve(api: httpx.Client, page: int) -> None:
    newest = api.get(f"/page_versions/{page}").json()["data"][0]["id"]
    assert api.put(f"/page_versions/{page}/{newest}", json={"is_approved": True}).status_code == 200


def test_page_links_read_back_as_export_forms(api: httpx.Client) -> None:
    page = _page(api, "Links")["id"]
    about = api.get("/pages", params={"limit": 100}).json()["data"]
    about_id = next(p["id"] for p in about if p["path"] == "/about")
    html = f'<a href="{{CCM:CID_{about_id}}}">a</a><a href="{{ccm:cid_1}}">h</a><a href="{{CCM:CID_999999}}">x</a>'
    assert _content(api, page, html) == (
        '<a href="{ccm:export:page:/about}">a</a><a href="{ccm:export:page:}">h</a><a href="{ccm:export:page:}">x</a>'
    )


def test_file_links_and_pictures_are_looked_up_by_leading_digits(api: httpx.Client) -> None:
    page = _page(api, "Files")["id"]
    logo = _files(api)["logo.png"]  # the default seed's first file: numeric id 1
    letter_led = "abcdef01-0000-4000-8000-000000000000"
    html = (
        '<a href="{CCM:FID_DL_1}">n</a><a href="{CCM:FID_DL_1abc-uuid}">d</a>'
        f'<a href="{{CCM:FID_DL_{letter_led}}}">l</a><concrete-picture fID="1" alt="x" />'
        f'<concrete-picture fID="{letter_led}" class="c" />{{CCM:FID_1}}'
    )
    assert _content(api, page, html) == (
        f'<a href="{_export(logo)}">n</a><a href="{_export(logo)}">d</a><a href="">l</a>'
        f'<concrete-picture alt="x" file="{_export(logo)[17:-1]}" /><concrete-picture fid="{letter_led}" class="c" />'
        "{CCM:FID_1}"
    )


def test_saving_lower_cases_names_and_translates_editor_urls(api: httpx.Client, sandbox: Sandbox) -> None:
    page = _page(api, "Markup")["id"]
    assert _content(api, page, "<P CLASS='Lead' data-Role=\"x\">Hi<BR><!-- Keep --><li>one</P>") == (
        "<p class='Lead' data-role=\"x\">Hi<br><!-- Keep --><li>one</p>"
    )
    logo = _files(api)["logo.png"]
    html = (
        f'<a href="{sandbox.url}/index.php?cID=1">h</a><a href="{sandbox.url}/download_file/view/1">f</a>'
        f'<img src="{sandbox.url}/download_file/view_inline/1" alt="i" /><a href="{sandbox.url}/about">b</a>'
    )
    assert _content(api, page, html) == (
        f'<a href="{{ccm:export:page:}}">h</a><a href="{_export(logo)}">f</a>'
        f'<concrete-picture alt="i" file="{_export(logo)[17:-1]}" /><a href="{{CCM:BASE_URL}}/about">b</a>'
    )


def test_export_forms_written_back_are_stored_verbatim_and_render_literally(
    api: httpx.Client, sandbox: Sandbox
) -> None:
    page = _page(api, "Round Trip")
    html = '<a href="{ccm:export:page:/about}">a</a> <a href="{CCM:CID_1}">home</a>'
    assert (
        _content(api, page["id"], html)
        == '<a href="{ccm:export:page:/about}">a</a> <a href="{ccm:export:page:}">home</a>'
    )
    _approve(api, page["id"])
    public = httpx.get(sandbox.url + page["path"]).text
    assert 'href="{ccm:export:page:/about}"' in public
    assert f'href="{sandbox.url}/"' in public


def test_image_file_column_is_cast_or_fails_like_the_database(api: httpx.Client) -> None:
    page = _page(api, "Images")["id"]
    logo = _files(api)["logo.png"]
    added = _add(api, page, "image", {"altText": "a", "fID": "1"}).json()["data"]
    assert added["value"]["fID"] == _export(logo)
    assert added["value"]["imageLink__which"] == "none"
    failed = _add(api, page, "image", {"altText": "a", "fID": _export(logo)})
    assert failed.status_code == 500
    assert "1366 Incorrect integer value" in failed.text
    assert "AddBlockToPageCommand" in failed.text
    orphan = api.get(f"/blocks/{added['id'] + 1}").json()["data"]
    assert orphan == {"id": added["id"] + 1, "type": "image", "value": []}
    as_read = api.put(f"/pages/{page}/Main/{added['id']}", json={"value": added["value"]})
    assert as_read.status_code == 200
    assert as_read.json()["errors"] == ["Cropping an image requires setting a max width and max height."]


def test_hero_image_stores_zero_for_a_value_that_is_not_a_number(api: httpx.Client) -> None:
    page = _page(api, "Heroes")["id"]
    logo = _files(api)["logo.png"]
    by_number = _add(api, page, "hero_image", {"title": "t", "image": 1}).json()["data"]
    assert by_number["value"]["image"] == _export(logo)
    written_back = api.put(f"/pages/{page}/Main/{by_number['id']}", json={"value": by_number["value"]}).json()
    assert written_back["data"]["value"]["image"] == ""


def test_layouts_and_containers_cannot_be_added(api: httpx.Client, sandbox: Sandbox) -> None:
    page = _page(api, "Layouts")["id"]
    html_500 = _add(api, page, "core_area_layout", {})
    assert html_500.status_code == 500
    assert "Undefined array key &quot;gridType&quot;" in html_500.text
    xhr = _add(api, page, "core_container", [], headers={"X-Requested-With": "XMLHttpRequest"})
    assert xhr.status_code == 500
    assert xhr.json()["errors"] == [
        'Handling "Concrete\\Core\\Block\\Command\\AddBlockToPageCommand" failed: Undefined array key "containerID"'
    ]
    versions = api.get(f"/page_versions/{page}").json()["data"]
    assert [v["is_approved"] for v in versions] == [0, 1]
    recent = api.get(f"/pages/{page}", params={"includes": "areas", "version": "recent"}).json()["data"]
    assert recent["areas"]["data"] == []
    after = _add(api, page, "content", {"content": "<p>x</p>"}).json()["data"]["id"]
    assert api.get(f"/blocks/{after - 1}").status_code == 500


def test_multi_record_blocks_read_back_without_their_entries(api: httpx.Client, sandbox: Sandbox) -> None:
    page = _page(api, "Questions")
    value = {"blockTitle": "Q", "title": ["A?", "B?"], "description": ["<p>a</p>", "<p>b</p>"]}
    added = _add(api, page["id"], "faq", value).json()["data"]
    assert added["value"] == {"blockTitle": "Q"}
    _approve(api, page["id"])
    assert httpx.get(sandbox.url + page["path"]).text.count("ccm-faq-entry-content") == 2
    api.put(f"/pages/{page['id']}/Main/{added['id']}", json={"value": added["value"]})
    _approve(api, page["id"])
    assert httpx.get(sandbox.url + page["path"]).text.count("ccm-faq-entry-content") == 0


@pytest.fixture
def layout_site(sandbox: Sandbox, tmp_path: Path) -> Sandbox:
    """A site with a container and its sub-areas, a page list and a document library (blocks in stored form)."""
    seed = {
        "folders": [{"id": 7, "name": "File Manager"}, {"id": 8, "name": "Documents", "parent": 7}],
        "pages": [
            {"path": "/", "name": "Home"},
            {
                "path": "/about",
                "name": "About",
                "id": 5,
                "areas": {
                    "Main": [
                        {"id": 40, "type": "core_container", "value": {}},
                        {"id": 41, "type": "page_list", "value": {"num": "3", "ptID": "9", "cParentID": "1"}},
                        {"id": 42, "type": "document_library", "value": {"folderID": "8"}},
                    ],
                    "Main : 2 : Column 1": [{"id": 43, "type": "content", "value": {"content": "<p>in</p>"}}],
                },
            },
            {"path": "/about/blog", "name": "Blog", "type": "blog"},
            {"path": "/about/blog/freshen-up-your-website", "name": "Freshen", "type": "blog_entry"},
        ],
    }
    (tmp_path / "seed.json").write_text(json.dumps(seed), encoding="utf-8")
    sandbox.reset(seed=str(tmp_path / "seed.json"))
    return sandbox


def test_sub_areas_and_reference_columns_of_a_seeded_site(layout_site: Sandbox) -> None:
    with client(layout_site, token(layout_site)) as api:
        areas = api.get("/pages/5", params={"includes": "areas"}).json()["data"]["areas"]["data"]
        assert [a["name"] for a in areas] == ["Main", "Main : 2 : Column 1"]
        main = areas[0]["blocks"]["data"]
        assert main[0]["value"] == []
        assert main[1]["value"]["ptID"] == "{ccm:export:pagetype:resource}"
        assert main[1]["value"]["cParentID"] == "{ccm:export:page:}"
        assert main[2]["value"]["folderID"] == "{ccm:export:filefolder:/Documents}"
        assert api.delete("/pages/5/Main/40").status_code == 200
        recent = api.get("/pages/5", params={"includes": "areas", "version": "recent"}).json()["data"]
        assert [a["name"] for a in recent["areas"]["data"]] == ["Main", "Main : 2 : Column 1"]
        assert api.get("/pages", params={"limit": 100}).json()["data"]
        assert httpx.get(layout_site.url + "/about/blog/freshen-up-your-website").status_code == 200


def test_batched_reads_show_the_live_version_and_block_drafts_keep_the_date(api: httpx.Client) -> None:
    section = _page(api, "Section")["id"]
    child = _page(api, "Child", parent=section)
    _add(api, child["id"], "content", {"content": "<p>draft</p>"})
    listed = api.get(f"/pages/{section}/children", params={"includes": "areas"}).json()["data"][0]
    assert listed["version"]["data"]["id"] == 1
    assert listed["areas"]["data"] == []
    assert listed["date_last_updated"] == child["date_last_updated"]
    recent = api.get(f"/pages/{section}/children", params={"includes": "areas", "version": "recent"}).json()
    assert recent["data"][0]["areas"]["data"] == []
    renamed = api.put(f"/pages/{child['id']}", json={"name": "Renamed"}).json()["data"]
    assert renamed["name"] == "Renamed"
    assert renamed["date_last_updated"] == child["date_last_updated"]
    assert api.get(f"/pages/{section}/children").json()["data"][0]["name"] == "Child"


def test_generated_handles_drop_excluded_words(api: httpx.Client) -> None:
    section = _page(api, "Handles")
    assert _page(api, "Freshen up your website", parent=section["id"])["path"].endswith("/freshen-your-website")
    assert _page(api, "Freshen up your website", parent=section["id"])["path"].endswith("/freshen-your-website-1")
    up = _page(api, "Up", parent=section["id"])
    assert up["path"] == f"{section['path']}/{up['id']}"


def test_group_list_hides_guest_and_registered_users(api: httpx.Client) -> None:
    assert 1 not in [g["id"] for g in api.get("/groups").json()["data"]]
    assert api.get("/groups/1").json()["data"] == {"id": 1, "name": "Guest"}


def test_download_view_links(api: httpx.Client, sandbox: Sandbox) -> None:
    logo = _files(api)["logo.png"]
    by_uuid = httpx.get(f"{sandbox.url}/download_file/view/{logo['id']}/1")
    assert by_uuid.status_code == 307
    assert by_uuid.headers["location"] == logo["url"]
    for refused in ("1", logo["id"].upper()):
        page = httpx.get(f"{sandbox.url}/download_file/view/{refused}/1")
        assert page.status_code == 200
        assert "Invalid File." in page.text
