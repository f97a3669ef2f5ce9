"""A page's desired form: built once from the spec, kept exactly through a plan file, rendered per mode."""

from __future__ import annotations

from cmssync.content.models import PageSpec
from cmssync.plan.desired import Resolver
from cmssync.plan.page_form import PageForm, page_form, render_desired, write_fields, write_value

SPEC = PageSpec.model_validate(
    {
        "name": "News",
        "description": "About ${page-link:/about}",
        "attributes": {"tags": ["a", "b"], "exclude_nav": True},
        "publish_end_date": "2027-01-31",
        "areas": {
            "Main": [
                {"type": "page_title", "value": {"useCustomTitle": True}},
                {"type": "content", "value": {"content": '<a href="${page-link:/about}">us</a> $${literal}'}},
                {"type": "image", "raw": True, "value": {"fID": "${file-id:logo.png}", "cropImage": False}},
                {"keep": {"type": "gallery", "id": 7}},
            ]
        },
    }
)
BASE = "http://cms.example"


def _resolver(mode: str) -> Resolver:
    return Resolver(
        file_urls={"logo.png": f"{BASE}/application/files/1234/5678/logo.png"},
        file_ids={"logo.png": "AB-CD"},
        page_ids={"/about": 12},
        mode="write" if mode == "write" else "compare",
        file_numbers={"logo.png": 38},
    )


def test_the_form_survives_a_plan_file_unchanged() -> None:
    form = page_form(SPEC)
    again = PageForm.model_validate_json(form.model_dump_json())
    assert again == form
    assert render_desired(again, "/news", _resolver("compare"), base_url=BASE).digest == (
        render_desired(form, "/news", _resolver("compare"), base_url=BASE).digest
    )


def test_blocks_are_written_in_stored_form_and_compared_in_export_form() -> None:
    title, content, image, kept = page_form(SPEC).areas["Main"]
    assert write_value(title, _resolver("write")) == {"useCustomTitle": "1", "titleText": "", "formatting": "h1"}
    assert write_value(content, _resolver("write")) == {"content": '<a href="{CCM:CID_12}">us</a> ${literal}'}
    assert write_value(content, _resolver("compare")) == {
        "content": '<a href="{ccm:export:page:/about}">us</a> ${literal}'
    }
    written = write_value(image, _resolver("write"))
    assert written["fID"] == "38"
    assert "cropImage" not in written  # "0" is never sent (the type's dropped_when_zero)
    assert written["imageLink__which"] == "none"  # what the controller reads instead of its link columns
    assert kept.keep_id == 7


def test_page_fields_and_end_date() -> None:
    form = page_form(SPEC)
    assert form.end_date == "2027-01-31 00:00:00"
    fields = write_fields(form, _resolver("write"))
    assert fields["description"] == "About {CCM:CID_12}"
    assert fields["attributes.exclude_nav"] is True
    assert render_desired(form, "/!stacks/footer", _resolver("compare"), base_url=BASE).fields == {}  # a stack
