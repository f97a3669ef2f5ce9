"""The sandbox shows a multilingual site as the real 9.3.1 site did in ``tests/conformance/concrete-9.3.1/
locales.jsonl`` (a ``de_DE`` tree added as the kit's ``add-locale.sh`` does; README › Scenario ``locales``). The same
steps are made against a sandbox site whose seed adds a ``de_DE`` tree, and the facts that do not depend on the
sample's content are compared: how the trees are named, what a tree's home and its pages say, what the page list
shows, shared block ids and what an update on one of the sharing pages does, localized stacks, and which public
pages render an edit."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from cmssync.emulator.embedded import Sandbox
from tests.emulator.helpers import replay_recorder
from tests.realsite.record_lists import PREFIX
from tests.realsite.record_localized_stacks import LocalizedStackRecorder
from tests.realsite.record_localized_stacks import facts as localized_stack_facts
from tests.support.locale_trees import SEED
from tests.support.tokens import sandbox_token

RECORDING = Path(__file__).resolve().parents[1] / "conformance" / "concrete-9.3.1" / "locales.jsonl"
STACKS_RECORDING = RECORDING.with_name("localized-stacks.jsonl")
SCOPES = "sites:read pages:read pages:areas:update_block pages:versions:read pages:versions:update blocks:read"


def _recorded() -> dict[str, dict[str, Any]]:
    if not RECORDING.is_file():  # pragma: no cover - the recording is part of the repository
        pytest.skip(f"recording not found at {RECORDING}")
    return {e["step"]: e for e in map(json.loads, RECORDING.read_text(encoding="utf-8").splitlines())}


def _body(exchange: dict[str, Any]) -> Any:
    return exchange["response"]["body"]["data"]


def _blocks(page: dict[str, Any]) -> dict[str, list[int]]:
    return {a["name"]: [int(b["id"]) for b in a["blocks"]["data"]] for a in page["areas"]["data"]}


def _tree_facts(sites: dict[str, Any], home2: dict[str, Any], children2: list[dict[str, Any]]) -> dict[str, Any]:
    default, other = sites["locales"]["data"]
    return {
        "locale keys": sorted(default),
        "default is the site's home": default["home_page_id"] == sites["home_page_id"],
        "default code": f"{default['language']}_{default['country']}" == sites["default_locale"],
        "other home differs": other["home_page_id"] != sites["home_page_id"],
        "home path is /language": home2["path"] == "/" + other["language"],
        "home type": home2["type"],
        "home locale": home2["locale"] == f"{other['language']}_{other['country']}",
        "home live version": home2["version"]["data"]["id"],
        "children under the home": all(c["path"].startswith(home2["path"] + "/") for c in children2),
        "children locale": {c["locale"] for c in children2} == {home2["locale"]},
    }


def _shared_facts(src: dict[str, Any], copy: dict[str, Any], put: dict[str, Any], after: dict[str, Any]) -> list[Any]:
    main_src, main_copy = _blocks(src)["Main"], _blocks(copy)["Main"]
    return [
        main_src == main_copy,  # a copy places the same block ids as its source
        put["id"] not in main_src,  # an update on the copy writes a new block id
        put["page"]["data"]["version"]["data"]["is_approved"] in (0, False),  # into a new draft of the copy
        _blocks(after)["Main"] == main_src,  # the source keeps its blocks
    ]


def test_a_second_locale_tree_reads_as_recorded(sandbox_server: Sandbox, tmp_path: Path) -> None:
    steps = _recorded()
    recorded = _tree_facts(
        _body(steps["sites.default.includes_locales"]),
        _body(steps["home.de_DE.read"]),
        _body(steps["home.de_DE.children.areas"]),
    )
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(SEED), encoding="utf-8")
    sandbox_server.reset(seed=str(seed), dialect="concrete")
    with httpx.Client(base_url=sandbox_server.url + "/ccm/api/1.0", timeout=30) as http:
        http.headers["authorization"] = "Bearer " + sandbox_token(sandbox_server, SCOPES)
        sites = http.get("/sites/default", params={"includes": "locales"}).json()["data"]
        home2_id = sites["locales"]["data"][1]["home_page_id"]
        home2 = http.get(f"/pages/{home2_id}").json()["data"]
        children2 = http.get(f"/pages/{home2_id}/children", params={"includes": "areas"}).json()["data"]
        assert _tree_facts(sites, home2, children2) == recorded

        # the page list shows the default tree only
        listed = http.get("/pages", params={"limit": 100}).json()["data"]
        recorded_list = _body(steps["list.limit100"])
        assert {p["locale"] for p in listed} == {p["locale"] for p in recorded_list} == {"en_US"}
        assert not any((p["path"] or "").startswith(home2["path"]) for p in [*listed, *recorded_list])

        # the homes, and a copied page and its source, place the same block ids
        home1 = http.get("/pages/1", params={"includes": "areas"}).json()["data"]
        home2_areas = http.get(f"/pages/{home2_id}", params={"includes": "areas"}).json()["data"]
        assert (_blocks(home1) == _blocks(home2_areas)) == (
            _blocks(_body(steps["home.en_US.areas"])) == _blocks(_body(steps["home.de_DE.areas"]))
        )
        about = http.get("/pages/2", params={"includes": "areas"}).json()["data"]
        about2 = next(c for c in children2 if c["path"] == home2["path"] + "/about")
        block = _blocks(about2)["Main"][1]
        put = http.put(f"/pages/{about2['id']}/Main/{block}", json={"value": {"content": "<p>MARKER</p>"}})
        after = http.get("/pages/2", params={"includes": "areas"}).json()["data"]
        assert _shared_facts(about, about2, put.json()["data"], after) == _shared_facts(
            _body(steps["tree1.about.read.all_includes"]),
            _body(steps["tree2.about.read.all_includes"]),
            _body(steps["block.put.tree2"]),
            _body(steps["block.read.tree1.live"]),
        )
        pages_of = http.get(f"/blocks/{_blocks(about)['Main'][0]}", params={"includes": "pages"}).json()["data"]
        recorded_pages = _body(steps["tree2.about.first_block.includes_pages"])["pages"]["data"]
        assert sorted(p["locale"] for p in pages_of["pages"]["data"]) == sorted(p["locale"] for p in recorded_pages)


def test_a_localized_stack_reads_and_renders_as_recorded(sandbox_server: Sandbox, tmp_path: Path) -> None:
    steps = _recorded()
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(SEED), encoding="utf-8")
    sandbox_server.reset(seed=str(seed), dialect="concrete")
    neutral_rec = _body(steps["stacks.footer_column_1.neutral"])
    localized_rec = _body(steps["stacks.footer_column_1.de_DE"])
    with httpx.Client(base_url=sandbox_server.url + "/ccm/api/1.0", timeout=30) as http:
        http.headers["authorization"] = "Bearer " + sandbox_token(sandbox_server, SCOPES)
        children = http.get("/pages/21/children").json()["data"]
        assert children == _body(steps["stacks.footer_column_1.neutral.children"]) == []
        neutral = http.get("/pages/21", params={"includes": "areas"}).json()["data"]
        # the localized version: the page whose path is the neutral stack's path and its handle again
        localized_path = neutral["path"] + "/" + neutral["path"].rsplit("/", 1)[1]
        localized_id = next(
            i for i in range(22, 60) if http.get(f"/pages/{i}").json().get("data", {}).get("path") == localized_path
        )
        localized = http.get(f"/pages/{localized_id}", params={"includes": "areas"}).json()["data"]

        def facts(n: dict[str, Any], loc: dict[str, Any]) -> list[Any]:
            return [
                loc["path"] == n["path"] + "/" + n["path"].rsplit("/", 1)[1],
                loc["name"] == n["name"],
                loc["type"],
                loc["template"],
                loc["locale"],
                _blocks(loc) == _blocks(n),
            ]

        assert facts(neutral, localized) == facts(neutral_rec, localized_rec)
        block = _blocks(localized)["Main"][0]
        put = http.put(f"/pages/{localized_id}/Main/{block}", json={"value": {"content": "<p>STACK-MARKER</p>"}})
        assert put.status_code == 200
        versions = http.get(f"/page_versions/{localized_id}").json()["data"]
        newest = max(int(v["id"]) for v in versions)
        assert http.put(f"/page_versions/{localized_id}/{newest}", json={"is_approved": True}).status_code == 200
    home2 = sandbox_server.url + "/de"
    counts = [httpx.get(url, timeout=30).text.count("STACK-MARKER") for url in (home2, sandbox_server.url + "/")]
    recorded_counts = [
        steps[f"stacks.footer_column_1.public.{which}"]["note"].count("marker: 1")
        for which in ("tree2_home", "tree1_home")
    ]
    assert counts == recorded_counts == [1, 0]


TREE_FEED = RECORDING.parent / "tree-feed.jsonl"
TREE_FEED_STAGES = ("nothing", "child_block_update", "child_approval", "home_block_update", "home_approval")


def _moves(marks: list[tuple[Any, Any]]) -> list[bool]:
    """Per stage after the first: whether the mark (date, live version) moved since the stage before."""
    return [after != before for before, after in itertools.pairwise(marks)]


def _marks(children: list[list[dict[str, Any]]], homes: list[dict[str, Any]], child: int) -> tuple[list[bool], ...]:
    child_marks = [
        next((p["date_last_updated"], p["version"]["data"]["id"]) for p in listed if int(p["id"]) == child)
        for listed in children
    ]
    home_marks = [(p["date_last_updated"], p["version"]["data"]["id"]) for p in homes]
    return _moves(child_marks), _moves(home_marks)


def test_the_second_trees_reads_the_drift_feed_makes_move_as_recorded(
    sandbox_server: Sandbox, tmp_path: Path, clock: Any
) -> None:
    """``tree-feed.jsonl``: a block update moves nothing until approved; the approval moves the child in its
    parent's children list (date and live version), and the tree home read on its own (``daemon/tree_feed.py``)."""
    steps = {e["step"]: e for e in map(json.loads, TREE_FEED.read_text(encoding="utf-8").splitlines())}
    recorded_children = [_body(steps[f"children.after_{stage}"]) for stage in TREE_FEED_STAGES]
    recorded_homes = [_body(steps[f"home.after_{stage}"]) for stage in TREE_FEED_STAGES]
    recorded_child = int(recorded_children[1][0]["id"])  # the recorder edits the first child with a content block
    assert next(e for e in steps.values() if e["step"] == "edit.child.update_block")["request"]["path"].startswith(
        f"/ccm/api/1.0/pages/{recorded_child}/"
    )
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(SEED), encoding="utf-8")
    sandbox_server.reset(seed=str(seed), dialect="concrete")
    children: list[list[dict[str, Any]]] = []
    homes: list[dict[str, Any]] = []
    with httpx.Client(base_url=sandbox_server.url + "/ccm/api/1.0", timeout=30) as http:
        http.headers["authorization"] = "Bearer " + sandbox_token(sandbox_server, SCOPES)
        site = http.get("/sites/default", params={"includes": "locales"}).json()["data"]
        home = int(site["locales"]["data"][1]["home_page_id"])

        def reads() -> None:
            children.append(http.get(f"/pages/{home}/children").json()["data"])
            homes.append(http.get(f"/pages/{home}").json()["data"])
            clock.next_second()

        def edit(page_id: int) -> None:
            page = http.get(f"/pages/{page_id}", params={"includes": "areas"}).json()["data"]
            block = page["areas"]["data"][0]["blocks"]["data"][0]["id"]
            http.put(f"/pages/{page_id}/Main/{block}", json={"value": {"content": "<p>e</p>"}}).raise_for_status()

        def approve(page_id: int) -> None:
            newest = max(int(v["id"]) for v in http.get(f"/page_versions/{page_id}").json()["data"])
            http.put(f"/page_versions/{page_id}/{newest}", json={"is_approved": True}).raise_for_status()

        reads()
        child = int(children[0][0]["id"])
        for act in (lambda: edit(child), lambda: approve(child), lambda: edit(home), lambda: approve(home)):
            act()
            reads()
    assert _marks(children, homes, child) == _marks(recorded_children, recorded_homes, recorded_child)


class _SandboxStackRecorder(LocalizedStackRecorder):
    def stack_pages(self) -> dict[str, int]:
        """The sandbox has no database to ask: the pages below ``/!stacks`` by reading ids."""
        found = {}
        for page_id in range(1, 100):
            answer = self.call("", "GET", f"{PREFIX}/pages/{page_id}")
            path = answer.json()["data"]["path"] or "" if answer.status_code == 200 else ""
            if path.startswith("/!stacks/"):
                found[path] = page_id
        return found


def test_localized_stacks_of_two_more_trees_read_and_render_as_recorded(
    sandbox_server: Sandbox, tmp_path: Path
) -> None:
    """``localized-stacks.jsonl`` (a real site with fr_FR and de_DE besides en_US): the recorder itself run against
    a sandbox seeded with the same trees gives the same facts — a stack's two versions have the neutral stack's name,
    type, locale and block ids, paths ``<handle>`` and ``<handle>-2`` in the order they were made, no children
    anywhere — so nothing a read shows tells their trees apart, while each tree's public home renders its own."""
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps({**SEED, "locales": [{"locale": "fr_FR"}, {"locale": "de_DE"}]}), encoding="utf-8")
    sandbox_server.reset(seed=str(seed), dialect="concrete")
    replayed = tmp_path / "replayed.jsonl"
    replay_recorder(sandbox_server, _SandboxStackRecorder, replayed, _SandboxStackRecorder.run)
    recorded = [json.loads(line) for line in STACKS_RECORDING.read_text(encoding="utf-8").splitlines()]
    assert localized_stack_facts([json.loads(line) for line in replayed.read_text().splitlines()]) == (
        localized_stack_facts(recorded)
    )
