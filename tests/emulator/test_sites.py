"""The sandbox shows a multi-site installation as the real 9.3.1 install did in ``tests/conformance/concrete-9.3.1/
sites.jsonl`` (a second site added with Concrete's own services by ``tests/realsite/add_site.sh``; README › ``sites``).
The recorded steps are made against a sandbox seeded with a second site (``tests/support/multisite.py``) and the
facts that do not depend on the sample's content are compared: how the sites are listed and read, what a site's home
says, which pages the page list shows for each host, what a page says about its site (nothing), and writes in the
second site."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from cmssync.emulator.embedded import Sandbox
from tests.support.multisite import SEED, host_of
from tests.support.tokens import sandbox_token

RECORDING = Path(__file__).resolve().parents[1] / "conformance" / "concrete-9.3.1" / "sites.jsonl"
SCOPES = (
    "sites:read pages:read pages:add pages:delete pages:areas:update_block pages:versions:read "
    "pages:versions:update blocks:read"
)


def _recorded() -> dict[str, dict[str, Any]]:
    return {e["step"]: e for e in map(json.loads, RECORDING.read_text(encoding="utf-8").splitlines())}


def _data(exchange: dict[str, Any]) -> Any:
    return exchange["response"]["body"]["data"]


def _site_facts(listed: list[dict[str, Any]], with_locales: list[dict[str, Any]], second: dict[str, Any]) -> Any:
    """What ``GET /sites`` (plain, ``includes=locales``) and ``GET /sites/{id}`` of the second site show."""
    return {
        "keys": [sorted(site) for site in listed],
        "ids ascending": [site["id"] for site in listed] == sorted(site["id"] for site in listed),
        "handles": [site["handle"] for site in listed],
        "default first": listed[0]["home_page_id"] == 1,
        "homes differ": len({site["home_page_id"] for site in listed}) == len(listed),
        "one locale per site, its home": [
            [(loc["home_page_id"] == site["home_page_id"]) for loc in site["locales"]["data"]] for site in with_locales
        ],
        "locale ids distinct": len({site["locales"]["data"][0]["id"] for site in with_locales}) == len(listed),
        "locale keys": sorted(with_locales[1]["locales"]["data"][0]),
        "by id keys": sorted(second),
        "by id custom attributes": second["custom_attributes"],
    }


def _home_facts(home: dict[str, Any], children: list[dict[str, Any]], default_children: list[dict[str, Any]]) -> Any:
    return {
        "path": home["path"],
        "type": home["type"],
        "template": home["template"],
        "locale": home["locale"],
        "children paths repeat the default site's": {c["path"] for c in children}
        & {c["path"] for c in default_children}
        == {"/about"},
        "children locale": {c["locale"] for c in children},
    }


def _list_facts(default_list: list[dict[str, Any]], second_list: list[dict[str, Any]], second_ids: set[int]) -> Any:
    default_ids, listed_second = {int(p["id"]) for p in default_list}, {int(p["id"]) for p in second_list}
    return {
        "default host lists no page of the second site": not default_ids & second_ids,
        "second host lists exactly the second site's pages": listed_second == second_ids,
        "default host lists the default home": 1 in default_ids,
    }


def test_two_sites_read_list_and_write_as_recorded(sandbox_server: Sandbox, tmp_path: Path) -> None:
    steps = _recorded()
    second_rec = steps["sites.list"]["response"]["body"]["data"][1]
    rec_home = int(second_rec["home_page_id"])
    rec_second_ids = {rec_home, *(int(c["id"]) for c in _data(steps["home.second.children"]))}
    recorded = [
        _site_facts(
            _data(steps["sites.list"]), _data(steps["sites.list.includes_locales"]), _data(steps["sites.second.by_id"])
        ),
        _home_facts(
            _data(steps["home.second.read"]),
            _data(steps["home.second.children"]),
            _data(steps["home.default.children"]),
        ),
        _list_facts(
            _data(steps["list.default_host.limit100"]), _data(steps["list.second_host.limit100"]), rec_second_ids
        ),
    ]
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(SEED), encoding="utf-8")
    sandbox_server.reset(seed=str(seed), dialect="concrete")
    second_host = {"host": host_of(sandbox_server.url)}
    with httpx.Client(base_url=sandbox_server.url + "/ccm/api/1.0", timeout=30) as http:
        http.headers["authorization"] = "Bearer " + sandbox_token(sandbox_server, SCOPES)
        listed = http.get("/sites").json()["data"]
        second = listed[1]
        home = int(second["home_page_id"])
        children = http.get(f"/pages/{home}/children").json()["data"]
        second_ids = {home, *(int(c["id"]) for c in children)}
        observed = [
            _site_facts(
                listed,
                http.get("/sites", params={"includes": "locales"}).json()["data"],
                http.get(f"/sites/{second['id']}").json()["data"],
            ),
            _home_facts(
                http.get(f"/pages/{home}").json()["data"], children, http.get("/pages/1/children").json()["data"]
            ),
            _list_facts(
                http.get("/pages", params={"limit": 100}).json()["data"],
                http.get("/pages", params={"limit": 100}, headers=second_host).json()["data"],
                second_ids,
            ),
        ]
        assert observed == recorded

        # /sites/default is the default site whatever the host; an unknown id and a handle are not found
        for step, path, headers in (
            ("second_host.sites.default", "/sites/default", second_host),
            ("sites.unknown", "/sites/42", {}),
            ("sites.by_handle", "/sites/second", {}),
        ):
            answer = http.get(path, headers=headers)
            rec = steps[step]["response"]
            assert answer.status_code == rec["status"], step
            if rec["status"] == 200:
                assert answer.json()["data"]["handle"] == rec["body"]["data"]["handle"] == "default"
            else:
                assert answer.json() == rec["body"], step
        # the undocumented site/siteTree parameters are ignored
        for name, params in (("site", {"site": "second"}), ("siteTree", {"siteTree": "2", "parent": str(home)})):
            got = {int(p["id"]) for p in http.get("/pages", params={"limit": 100, **params}).json()["data"]}
            rec_got = {int(p["id"]) for p in _data(steps[f"list.default_host.param.{name}"])}
            assert (got & second_ids, rec_got & rec_second_ids) == (set(), set())

        # a page says nothing about its site: the same fields as a default-site page; made-up includes ignored
        about2 = next(int(c["id"]) for c in children if c["path"] == "/about")
        includes = {"includes": "areas,custom_attributes,files,version"}
        page2 = http.get(f"/pages/{about2}", params=includes).json()["data"]
        page1 = http.get("/pages/2", params=includes).json()["data"]
        assert (sorted(page2), sorted(page1)) == (
            sorted(_data(steps["page.second.about.all_includes"])),
            sorted(_data(steps["page.default.about.all_includes"])),
        )
        assert sorted(page2) == sorted(page1)
        madeup = http.get(f"/pages/{about2}", params={"includes": "site,sites,site_tree,tree"}).json()["data"]
        assert sorted(madeup) == sorted(_data(steps["page.second.about.madeup_includes"]))
        block = page2["areas"]["data"][0]["blocks"]["data"][0]["id"]
        pages_of = http.get(f"/blocks/{block}", params={"includes": "pages"}).json()["data"]["pages"]["data"]
        rec_pages_of = _data(steps["page.second.about.block.includes_pages"])["pages"]["data"]
        assert [p["path"] for p in pages_of] == [p["path"] for p in rec_pages_of] == ["/about"]

        # a page created under the second site's home: listed for the second host only
        created = http.post("/pages", json={"parent": home, "name": "Site Test", "type": "page", "template": "full"})
        rec_created = _data(steps["create.post"])
        assert created.status_code == 200
        created_page = created.json()["data"]
        assert (created_page["path"].count("/"), created_page["locale"]) == (
            rec_created["path"].count("/"),
            rec_created["locale"],
        )
        top_default = [int(p["id"]) for p in http.get("/pages", params={"limit": 3}).json()["data"]]
        top_second = [int(p["id"]) for p in http.get("/pages", params={"limit": 3}, headers=second_host).json()["data"]]
        rec_top_default = [int(p["id"]) for p in _data(steps["create.list_top"])]
        rec_top_second = [int(p["id"]) for p in _data(steps["create.second_host.list_top"])]
        assert (created_page["id"] in top_default, created_page["id"] == top_second[0]) == (
            rec_created["id"] in rec_top_default,
            rec_created["id"] == rec_top_second[0],
        )

        # a block update in the second site: a new block id in a draft; the default /about keeps its blocks
        before1 = http.get("/pages/2", params={"includes": "areas"}).json()["data"]
        put = http.put(f"/pages/{about2}/Main/{block}", json={"value": {"content": "<p>SITE-MARKER</p>"}})
        rec_put = _data(steps["block.put.second"])
        assert (put.json()["data"]["id"] != block, put.json()["data"]["page"]["data"]["version"]["data"]["id"]) == (
            rec_put["id"] != int(steps["block.put.second"]["request"]["path"].rsplit("/", 1)[1]),
            rec_put["page"]["data"]["version"]["data"]["id"],
        )
        newest = max(int(v["id"]) for v in http.get(f"/page_versions/{about2}").json()["data"])
        assert http.put(f"/page_versions/{about2}/{newest}", json={"is_approved": True}).status_code == 200
        assert http.get("/pages/2", params={"includes": "areas"}).json()["data"]["areas"] == before1["areas"]

        deleted = http.delete(f"/pages/{created_page['id']}").json()
        assert sorted(deleted) == sorted(steps["delete.page"]["response"]["body"])
        left = [c["path"] for c in http.get(f"/pages/{home}/children").json()["data"]]
        assert left == [c["path"] for c in _data(steps["delete.second_home.children"])] == ["/about", "/contact"]

    # the public /about of each site: the edit shows on the second site's only
    counts = [
        httpx.get(sandbox_server.url + "/about", headers=headers, timeout=30).text.count("SITE-MARKER")
        for headers in ({}, second_host)
    ]
    recorded_counts = [
        steps[f"public.{which}.about"]["note"].count("SITE-MARKER: 1") for which in ("default_host", "second_host")
    ]
    assert counts == recorded_counts == [0, 1]


@pytest.mark.parametrize("host", ["127.0.0.1", "unknown.localhost"])
def test_a_host_no_site_names_is_the_default_site(sandbox_server: Sandbox, tmp_path: Path, host: str) -> None:
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(SEED), encoding="utf-8")
    sandbox_server.reset(seed=str(seed), dialect="concrete")
    with httpx.Client(base_url=sandbox_server.url + "/ccm/api/1.0", timeout=30) as http:
        http.headers["authorization"] = "Bearer " + sandbox_token(sandbox_server, SCOPES)
        listed = http.get("/pages", params={"limit": 100}, headers={"host": host_of(sandbox_server.url, host)})
        assert {p["path"] for p in listed.json()["data"]} == {None, "/about", "/about/team"}
