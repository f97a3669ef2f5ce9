"""Record how a real 9.3.1 multi-site installation shows its sites: ``python -m tests.realsite.record_sites
ENV_FILE OUT`` (OUT: ``tests/conformance/concrete-9.3.1/sites.jsonl``).

Opt-in, against a real Concrete 9.3.1 kit site of ``../shared/realsite/`` made multi-site right before the run with
``tests/realsite/add_site.sh`` (Concrete's own services: advanced permissions, multisite enabled, a site type and a
second site ``second`` whose home gets a content block and two pages, ``/about`` and ``/contact``, each with one).
Scenario ``sites``:

* ``sites.*``: ``GET /sites`` (plain and ``includes=locales``), ``GET /sites/default`` (plain, ``includes=locales``),
  ``GET /sites/{id}`` of every site (its default includes, and ``includes=locales``), an unknown site id;
* ``home.<handle>.*``: each site's home by id (plain, ``includes=areas``), its children, its versions;
* ``list.<host>.*``: ``GET /pages?limit=100`` and a cursor walk (``limit=10`` + ``after``) until an empty page, sent
  to the site's address as the base URL names it (``default``) and with the second site's host
  (``second.localhost:<port>``, its canonical URL; the request still goes to 127.0.0.1) — which site's pages the list
  shows — and the undocumented ``site``/``siteTree`` parameters; ``GET /sites/default`` and a default-site page by id
  with the second site's host;
* ``page.*``: the second site's ``/about`` with every include and made-up ``site`` include, the default site's
  ``/about`` for comparison, ``GET /blocks/{id}?includes=pages`` of a block of the second site;
* ``create.*``: ``POST /pages`` under the second site's home; its read; the second home's children and the list;
* ``block.*``: ``PUT`` of the content block of the second site's ``/about``, approval, live reads of both
  ``/about`` pages;
* ``public.*``: the public ``/about`` with each host (the marker counted);
* ``delete.*``: ``DELETE`` of the created page and the second home's children after it.

``add_site.sh`` must give the second site the canonical URL ``http://second.localhost:<port>/`` (Concrete picks the
site of a request by the host of a site's canonical URL or domain, port left out).

Every ``note`` holding ``| …`` is a summary computed from that response (ids, paths, locales, block ids). Only HTTP.
"""

from __future__ import annotations

import sys
import uuid
from typing import Any
from urllib.parse import quote, urlsplit

from tests.realsite.record_lists import PREFIX, Recorder, items_of, record


def _brief(page: dict[str, Any]) -> str:
    return f"{page.get('id')} {page.get('path')!r} {page.get('locale')}"


def _blocks(page: dict[str, Any]) -> dict[str, list[int]]:
    return {a["name"]: [int(b["id"]) for b in items_of(a["blocks"])] for a in items_of(page.get("areas"))}


class SitesRecorder(Recorder):
    def get(self, step: str, path: str, note: str = "", **params: str) -> Any:
        response = self.call(step, "GET", f"{PREFIX}{path}", params=params or None, note=note)
        try:
            return response.json()
        except ValueError:
            return None

    def summary(self, text: str) -> None:
        self.patch_note(text)

    def sites(self) -> list[dict[str, Any]]:
        self.scenario = "sites"
        listed = self.get("sites.list", "/sites")["data"]
        self.summary("| " + "; ".join(f"{s['id']} {s['handle']} home {s['home_page_id']}" for s in listed))
        self.get("sites.list.includes_locales", "/sites", includes="locales")
        self.get("sites.default", "/sites/default")
        self.get("sites.default.includes_locales", "/sites/default", includes="locales")
        for site in listed:
            self.get(f"sites.{site['handle']}.by_id", f"/sites/{site['id']}")
            self.get(f"sites.{site['handle']}.by_id.includes_locales", f"/sites/{site['id']}", includes="locales")
        self.get("sites.unknown", f"/sites/{max(int(s['id']) for s in listed) + 40}")
        self.get("sites.by_handle", f"/sites/{listed[-1]['handle']}", note="a handle where the route takes an id")
        return list(listed)

    def homes(self, sites: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        children: dict[str, list[dict[str, Any]]] = {}
        for site in sites:
            handle, home = site["handle"], int(site["home_page_id"])
            page = self.get(f"home.{handle}.read", f"/pages/{home}")["data"]
            self.summary(f"| {_brief(page)}")
            page = self.get(f"home.{handle}.areas", f"/pages/{home}", includes="areas")["data"]
            self.summary(f"| blocks {_blocks(page)}")
            listed = self.get(f"home.{handle}.children", f"/pages/{home}/children")["data"]
            self.summary("| " + "; ".join(_brief(c) for c in listed))
            self.get(f"home.{handle}.versions", f"/page_versions/{home}")
            children[handle] = list(listed)
        return children

    def lists(self, where: str, second_home: int) -> None:
        listed = self.get(f"list.{where}.limit100", "/pages", limit="100")["data"]
        ids = sorted({int(p["id"]) for p in listed})
        self.summary(f"| {len(listed)} items, {len(ids)} distinct ids: {ids}")
        after = ""
        for number in range(1, 40):
            params = {"limit": "10", **({"after": after} if after else {})}
            page = self.get(f"list.{where}.walk.{number}", "/pages", **params)["data"]
            self.summary("| " + ", ".join(str(p["id"]) for p in page))
            if not page:
                break
            after = str(page[-1]["id"])
        for name, params in (
            ("site", {"limit": "100", "site": "second"}),
            ("siteTree", {"limit": "100", "siteTree": "2", "parent": str(second_home)}),
        ):
            page = self.get(f"list.{where}.param.{name}", "/pages", **params)["data"]
            self.summary(f"| {len(page)} items, distinct ids {sorted({int(p['id']) for p in page})}")

    def second_host_reads(self, about1: int) -> None:
        site = self.get("second_host.sites.default", "/sites/default")["data"]
        self.summary(f"| {site['id']} {site['handle']}")
        page = self.get("second_host.default_about", f"/pages/{about1}")["data"]
        self.summary(f"| {_brief(page)}")

    def public(self, step: str, path: str) -> None:
        response = self.call(step, "GET", path)
        self.summary(f"| status {response.status_code}, SITE-MARKER: {response.text.count('SITE-MARKER')}")

    def page_reads(self, about2: int, about1: int) -> int:
        includes = "areas,custom_attributes,files,version"
        page = self.get("page.second.about.all_includes", f"/pages/{about2}", includes=includes)["data"]
        self.summary(f"| {_brief(page)} keys {sorted(page)} blocks {_blocks(page)}")
        self.get("page.second.about.madeup_includes", f"/pages/{about2}", includes="site,sites,site_tree,tree")
        page1 = self.get("page.default.about.all_includes", f"/pages/{about1}", includes=includes)["data"]
        self.summary(f"| {_brief(page1)} keys {sorted(page1)} blocks {_blocks(page1)}")
        block = _blocks(page)["Main"][0]
        self.get("page.second.about.block.includes_pages", f"/blocks/{block}", includes="pages")
        return block

    def create(self, second_home: int) -> int:
        name = f"Site Test {uuid.uuid4().hex[:6]}"
        body = {"parent": second_home, "name": name, "type": "page", "template": "full"}
        created = self.call("create.post", "POST", f"{PREFIX}/pages", json=body).json()["data"]
        self.summary(f"| {_brief(created)}")
        self.get("create.read", f"/pages/{created['id']}")
        listed = self.get("create.second_home.children", f"/pages/{second_home}/children")["data"]
        self.summary("| " + "; ".join(_brief(c) for c in listed))
        top = self.get("create.list_top", "/pages", limit="3")["data"]
        self.summary("| " + "; ".join(_brief(p) for p in top))
        return int(created["id"])

    def block(self, about2: int, about1: int, block: int) -> None:
        value = {"content": "<p>edited on the second site (SITE-MARKER)</p>"}
        route = f"{PREFIX}/pages/{about2}/{quote('Main', safe='')}/{block}"
        put = self.call("block.put.second", "PUT", route, json={"value": value}).json()["data"]
        self.summary(f"| new block id {put['id']}, version {put['page']['data']['version']['data']}")
        versions = self.get("block.versions", f"/page_versions/{about2}")["data"]
        newest = max(int(v["id"]) for v in versions)
        route = f"{PREFIX}/page_versions/{about2}/{newest}"
        self.call("block.approve", "PUT", route, json={"is_approved": True})
        page = self.get("block.read.second.live", f"/pages/{about2}", includes="areas")["data"]
        self.summary(f"| blocks {_blocks(page)}")
        page = self.get("block.read.default.live", f"/pages/{about1}", includes="areas")["data"]
        self.summary(f"| blocks {_blocks(page)}")

    def delete(self, page_id: int, second_home: int) -> None:
        self.call("delete.page", "DELETE", f"{PREFIX}/pages/{page_id}")
        listed = self.get("delete.second_home.children", f"/pages/{second_home}/children")["data"]
        self.summary("| " + "; ".join(_brief(c) for c in listed))

    def scenario_sites(self) -> None:
        sites = self.sites()
        if len(sites) < 2:
            raise SystemExit("one site only: make the installation multi-site first (tests/realsite/add_site.sh)")
        children = self.homes(sites)
        default, second = sites[0], sites[1]
        second_home = int(second["home_page_id"])
        about2 = next(int(c["id"]) for c in children[second["handle"]] if c["path"] == "/about")
        about1 = next(int(c["id"]) for c in children[default["handle"]] if c["path"] == "/about")
        self.lists("default_host", second_home)
        self.host = self.second_host
        self.lists("second_host", second_home)
        self.second_host_reads(about1)
        self.host = ""
        block = self.page_reads(about2, about1)
        created = self.create(second_home)
        self.host = self.second_host
        top = self.get("create.second_host.list_top", "/pages", limit="3")["data"]
        self.summary("| " + "; ".join(_brief(p) for p in top))
        self.host = ""
        self.block(about2, about1, block)
        self.public("public.default_host.about", "/about")
        self.host = self.second_host
        self.public("public.second_host.about", "/about")
        self.host = ""
        self.delete(created, second_home)

    @property
    def second_host(self) -> str:
        return f"second.localhost:{urlsplit(self.env['CONCRETE_BASE']).port}"


def main(argv: list[str]) -> int:
    return record(argv, SitesRecorder, SitesRecorder.scenario_sites)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
