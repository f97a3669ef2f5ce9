"""Issue 35 on a real multilingual Concrete CMS 9.3.1 site (opt-in: see conftest.py; the site must have been made
with ``LOCALES=…`` by ``shared/realsite/up.sh``, which puts ``CONCRETE_LOCALES`` in its env file — else skipped).

Nothing here knows the sample's content: the trees come from ``GET /sites/default?includes=locales``, the pages from
walking each tree's home, the page edited is the first page of another tree with a content block in its file, the
stack edited is the first localized stack whose neutral version the default home renders.

* ``pull`` takes every page of every tree (and the localized stacks); the plan right after is empty;
* an edit of a content block of a page in another tree shows on that page's public URL and not on the page at the
  same place in the default tree (copies share block ids with their sources: ``locales.jsonl``);
* a new page file beside it is created in that tree (it reports the tree's locale);
* the next plan is empty;
* a localized stack edit shows on the other tree's home and not on the default home.
"""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.realsite.harness import PublicSite, RawApi, Report, SiteAccess, run_cmssync
from tests.realsite.harness import mark_first_content_block as _mark_first_content_block
from tests.realsite.harness import plan_is_empty as _plan_is_empty
from tests.realsite.harness import pulled_paths as _pulled_paths
from tests.realsite.harness import walk_pages as _walk

yaml = YAML()
yaml.width = 4096


@pytest.fixture(autouse=True)
def _multilingual(realsite_env: dict[str, str]) -> None:
    if not realsite_env.get("CONCRETE_LOCALES"):
        pytest.skip("not a multilingual site (its env file names no CONCRETE_LOCALES)")


def _trees(api: RawApi) -> list[dict[str, Any]]:
    site = api.call("GET", "/sites/default", params={"includes": "locales"})
    locales = site["locales"]["data"] if isinstance(site["locales"], dict) else site["locales"]
    return [{**locale, "code": f"{locale['language']}_{locale['country']}"} for locale in locales]


def test_every_locale_tree_is_pulled_edited_and_extended(
    real_site: SiteAccess, api: RawApi, public: PublicSite, content_dir: Path, report: Report
) -> None:
    trees = _trees(api)
    assert len(trees) > 1
    default_home = int(api.call("GET", "/sites/default")["home_page_id"])
    pages = {code: _walk(api, int(t["home_page_id"])) for t in trees for code in [t["code"]]}
    others = [t for t in trees if int(t["home_page_id"]) != default_home]
    other = others[0]
    other_pages = pages[other["code"]]
    home_path = next(path for path, page_id in other_pages.items() if page_id == int(other["home_page_id"]))

    pull = run_cmssync(real_site, content_dir, "pull")
    report.add("locale trees", pull, pages=sum(len(p) for p in pages.values()))
    assert pull.code == 0, pull.output
    expected = {path for tree in pages.values() for path in tree}
    assert _pulled_paths(content_dir) == expected
    assert (content_dir / "pages" / home_path.strip("/") / "index.yaml").is_file()
    if len(others) > 1 and list((content_dir / "stacks").glob("*/*.yaml")):
        # which tree a localized stack is for is not in the API (localized-stacks.jsonl): said, never guessed
        assert "are managed by their files with no locale tree named" in pull.output
    _plan_is_empty(real_site, content_dir, report, "locale trees: plan after pull")

    # an edit of a content block of a page in the other tree (its blocks are shared with its source page's)
    rid = secrets.token_hex(4)
    marker = f"LOCALE-EDIT-{rid}"
    edited, area, sibling = None, None, {}
    for path in sorted(other_pages):
        if path == home_path:
            continue
        file = content_dir / "pages" / f"{path.strip('/')}.yaml"
        if file.is_file() and (area := _mark_first_content_block(file, marker)):
            edited, sibling = path, yaml.load(file.read_text(encoding="utf-8"))
            break
    assert edited is not None, "no page of the other tree has a content block"
    original = "/" + edited[len(home_path) :].lstrip("/")
    new_page = f"{edited.rsplit('/', 1)[0]}/cmssync-locale-{rid}"
    new_file = content_dir / "pages" / f"{new_page.strip('/')}.yaml"
    new_marker = f"LOCALE-NEW-{rid}"
    # the new page takes the edited page's type and template (the site has them) and a content block in its area
    kind = {key: sibling[key] for key in ("type", "template") if sibling.get(key)}
    new_file.write_text(
        "".join(f"{key}: {value}\n" for key, value in kind.items())
        + f"name: Locale page {rid}\nareas:\n  {json.dumps(area)}:\n    - type: content\n"
        f"      value:\n        content: <p>{new_marker}</p>\n",
        encoding="utf-8",
    )
    apply = run_cmssync(real_site, content_dir, "apply", "--yes")
    report.add("locale trees: edit and new page", apply)
    assert apply.code == 0, apply.output
    assert marker in public.page(edited).html
    if original in pages[trees[0]["code"]] or original == "/":
        assert marker not in public.page(original).html
    created = public.page(new_page)
    assert created.status == 200
    assert new_marker in created.html
    created_id = next(
        int(c["id"])
        for c in api.call("GET", f"/pages/{other_pages[new_page.rsplit('/', 1)[0] or '/']}/children")
        if c["path"] == new_page
    )
    assert api.call("GET", f"/pages/{created_id}")["locale"] == other["code"]
    _plan_is_empty(real_site, content_dir, report, "locale trees: plan after apply")

    # a localized stack edit: shown on the other tree's pages only
    default_html = public.page("/").html
    stack_marker = f"LOCALE-STACK-{rid}"
    stack_file = None
    for candidate in sorted((content_dir / "stacks").glob("*/*.yaml")):
        neutral = yaml.load((content_dir / "stacks" / f"{candidate.parent.name}.yaml").read_text(encoding="utf-8"))
        texts = [
            re.sub(r"<[^>]+>", " ", str(b["value"].get("content") or "")).split()
            for b in (neutral.get("areas") or {}).get("Main", [])
            if b.get("type") == "content" and isinstance(b.get("value"), dict)
        ]
        shown = any(words and " ".join(words[:3]) in " ".join(default_html.split()) for words in texts)
        if shown and _mark_first_content_block(candidate, stack_marker):
            stack_file = candidate
            break
    if stack_file is None:
        pytest.skip("no localized stack with a content block that the default home renders")
    apply = run_cmssync(real_site, content_dir, "apply", "--yes")
    report.add("locale trees: localized stack", apply)
    assert apply.code == 0, apply.output
    homes = {t["code"]: next(p for p, i in pages[t["code"]].items() if i == int(t["home_page_id"])) for t in others}
    shown = sorted(code for code, path in homes.items() if stack_marker in public.page(path).html)
    # one tree renders a stack's version; with one tree besides the default, cmssync names it as that tree's
    assert (shown == [other["code"]]) if len(others) == 1 else (len(shown) == 1), shown
    assert stack_marker not in public.page("/").html
    _plan_is_empty(real_site, content_dir, report, "locale trees: plan after the stack edit")
