"""The HTML report as a document: what it holds, what it escapes, what its policy allows, how big it gets."""

from __future__ import annotations

import base64
import hashlib
import re

from cmssync.plan.actions import Action, BlockChange, BlockedDeletes, FieldChange, Plan
from cmssync.render.html import files_wanted, render_html
from cmssync.render.html.document import OPEN_LIMIT
from cmssync.render.html.preview import IMAGE_BUDGET, MAX_IMAGE_BYTES, estimated_height
from tests.report.markup import read
from tests.report.scenario import HOSTILE, big_plan, png
from tests.support.plans import content_update

SITE = "https://www.example.org/cms"


def plan_of(*actions: Action, **extra: object) -> Plan:
    return Plan(site=SITE, content_digest="sha256:" + "1" * 64, actions=actions, **extra)  # type: ignore[arg-type]


def page_update(key: str = "/about", **blocks: BlockChange) -> Action:
    return Action(kind="page", key=key, op="update", blocks=tuple(blocks.values()))


def test_hostile_strings_from_the_plan_are_escaped_everywhere() -> None:
    evil = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    plan = plan_of(
        Action(
            kind="page",
            key="/x" + evil,
            op="update",
            changes=(FieldChange(field="name" + evil, before=evil, after=evil + "!"),),
            blocks=(
                BlockChange(area="Main" + evil, op="add", position=0, block_type="html", after={"content": HOSTILE}),
            ),
            note=evil,
        ),
        warnings=(evil,),
    )
    report = read(render_html(plan))
    assert not report.find("img")
    assert not report.find("iframe")
    assert [attrs for attrs, _ in report.scripts] == [{"type": "application/json", "id": "report-data"}, {}]
    assert report.data["docs"] == [HOSTILE]  # block HTML only in the data, for the sandboxed frames


def test_the_data_cannot_end_its_script_element() -> None:
    content = "<p>a</p></script><script>alert(1)</script><!-- <script>"
    plan = plan_of(
        page_update(b=BlockChange(area="Main", op="add", position=0, block_type="html", after={"content": content}))
    )
    document = render_html(plan)
    assert document.count("</script>") == 2
    assert read(document).data["docs"] == [content]


def test_the_policy_allows_only_the_reports_script_and_images_from_the_site() -> None:
    report = read(render_html(plan_of(page_update())))
    script = next(text for attrs, text in report.scripts if not attrs)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    policy = dict(part.strip().split(" ", 1) for part in report.policy.split(";"))
    assert policy["default-src"] == "'none'"
    assert policy["script-src"] == f"'sha256-{digest}'"
    assert policy["img-src"] == "data: https://www.example.org"
    assert "unsafe-eval" not in report.policy
    assert "unsafe-inline" not in policy["script-src"]
    assert 'http-equiv="Content-Security-Policy"' in report.data["head"]


def test_previews_resolve_the_site_and_keep_new_files_for_inlining() -> None:
    after = '<p><img src="${file:images/new.png}"></p><p><img src="{CCM:BASE_URL}/application/files/1/old.png"></p>'
    block = content_update(4, {"content": "<p>x</p>"}, {"content": after})
    plan = plan_of(page_update(b=block), Action(kind="file", key="images/new.png", op="create"))
    assert files_wanted(plan) == ["images/new.png"]
    data = read(render_html(plan, files={"images/new.png": png(3, 3, (1, 2, 3))})).data
    assert f'src="{SITE}/application/files/1/old.png"' in data["docs"][1]
    assert "${file:images/new.png}" in data["docs"][1]  # replaced by the script, so the data URI is stored once
    assert data["images"]["images/new.png"].startswith("data:image/png;base64,iVBOR")


def test_images_beyond_the_budgets_become_named_placeholders() -> None:
    actions = [Action(kind="file", key=f"images/{n}.png", op="create") for n in range(12)]
    files = {f"images/{n}.png": b"\x89PNG" + bytes(MAX_IMAGE_BYTES - 10) for n in range(12)}
    files["images/0.png"] = bytes(MAX_IMAGE_BYTES + 1)
    images = read(render_html(plan_of(*actions), files=files)).data["images"]
    inlined = [k for k, v in images.items() if v.startswith("data:image/png")]
    assert "images/0.png" not in inlined
    assert len(inlined) == IMAGE_BUDGET // (MAX_IMAGE_BYTES - 6)
    placeholder = base64.b64decode(images["images/0.png"].split(",", 1)[1]).decode()
    assert "images/0.png: too large to inline" in placeholder


def test_summary_counts_conflicts_blocked_deletes_and_warnings() -> None:
    plan = plan_of(
        Action(kind="page", key="/a", op="create"),
        Action(
            kind="page",
            key="/b",
            op="update",
            drift=True,
            changes=(FieldChange(field="name", before="B", after="Bee"),),
        ),
        Action(kind="file", key="f.txt", op="delete"),
        blocked=(
            BlockedDeletes(kind="page", keys=("/c", "/d"), managed=3, guard="max_fraction", limit="max_fraction=0.25"),
        ),
        warnings=("something to know",),
    )
    document = render_html(plan)
    report = read(document)
    cells = {(e.attrs["data-kind"], e.attrs["data-op"]) for e in report.find("td") if "data-kind" in e.attrs}
    assert ("page", "create") in cells
    assert ("total", "delete") in cells
    assert re.search(r'data-kind="page" data-op="update">1<', document)
    assert re.search(r'data-kind="total" data-op="create">1<', document)
    assert 'id="conflicts">Conflicts: 1 changed on the site outside cmssync' in document
    assert 'id="blocked">Blocked deletes: 2' in document
    assert "<code>/c, /d</code>" in document
    assert 'id="warnings">Warnings: 1' in document
    assert "something to know" in document
    assert len(report.find("details")) == 3
    assert all("open" in d.attrs for d in report.find("details"))


def test_removed_and_added_blocks_have_one_preview_and_updates_two() -> None:
    plan = plan_of(
        page_update(
            u=content_update(1, {"content": "<p>old</p>"}, {"content": "<p>new</p>"}),
            d=BlockChange(
                area="Main",
                op="delete",
                position=1,
                block_type="content",
                block_id=2,
                before={"content": "<p>gone</p>"},
            ),
            a=BlockChange(area="Main", op="add", position=1, block_type="content", after={"content": "<p>added</p>"}),
        )
    )
    report = read(render_html(plan))
    docs = report.data["docs"]
    placeholders = [docs[int(e.attrs["data-doc"])] for e in report.find("div", **{"class": "pv"})]
    assert placeholders == ["<p>old</p>", "<p>new</p>", "<p>gone</p>", "<p>added</p>"]


def test_big_plans_open_collapsed_with_bodies_in_the_data() -> None:
    small = read(render_html(big_plan(OPEN_LIMIT)))
    assert small.data["bodies"] == []
    assert len(small.find("div", **{"class": "pv"})) == 4 * OPEN_LIMIT
    big = read(render_html(big_plan(OPEN_LIMIT + 1)))
    sections = big.find("details")
    assert len(sections) == OPEN_LIMIT + 1
    assert not any("open" in s.attrs for s in sections)
    assert [s.attrs["data-body"] for s in sections] == [str(n) for n in range(OPEN_LIMIT + 1)]
    assert not big.find("div", **{"class": "pv"})  # parsed only when a section is opened
    assert 'data-doc="0"' in big.data["bodies"][0]


def test_a_thousand_page_report_stays_small() -> None:
    document = render_html(big_plan(1000))
    assert len(document.encode()) < 10_000_000
    assert len(read(document).data["docs"]) == 4000


def test_preview_heights_grow_with_the_content_within_bounds() -> None:
    short, long_ = estimated_height("<p>x</p>"), estimated_height("<p>" + "word " * 400 + "</p>" * 3)
    assert 70 <= short < long_ <= 520
    assert estimated_height('<p><img src="a.png"></p>') > short


def test_a_tampered_site_string_adds_nothing_to_the_policy() -> None:
    """Issue 29 item 10: the policy's image source is rebuilt from the parsed host, never copied from the plan."""
    for site, origin in (
        ("https://x.example; script-src 'unsafe-inline' *", None),
        ("https://x.example;script-src * /cms", None),
        ("https://x.example:99999/", None),
        ("https://user:pw@x.example:8443/cms", "https://x.example:8443"),
        ("http://[::1]:8080/", "http://[::1]:8080"),
    ):
        plan = Plan(site=site, content_digest="sha256:" + "1" * 64, actions=(page_update(),))
        policy = dict(part.strip().split(" ", 1) for part in read(render_html(plan)).policy.split(";"))
        assert policy["img-src"] == "data:" + (f" {origin}" if origin else ""), site
        assert set(policy) == {
            "default-src",
            "script-src",
            "style-src",
            "img-src",
            "base-uri",
            "form-action",
            "frame-ancestors",
        }, site
