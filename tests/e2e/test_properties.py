"""Property: for any content, plan(x, observe(apply(x))) is empty — also after applying one content over another.

Applying the second site over the first uses ``--replace-moved``: two identical pages at different paths are a
move (design.md §5), which needs it to be carried out.

Random sites (pages in a small tree, areas of random blocks with text the server transforms: trailing blanks,
links to the site itself, booleans) are applied to the sandbox; the plan that follows must be empty. Bounded: a few
examples, each a handful of requests on loopback.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from cmssync.emulator.embedded import Sandbox
from tests.support.sites import Site

WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "über", "naïve", "x&y", "5 < 6", "tab\tend"])


@st.composite
def html_text(draw: st.DrawFn) -> str:
    parts = draw(st.lists(WORDS, min_size=1, max_size=5))
    text = " ".join(parts)
    shape = draw(st.sampled_from(["plain", "para", "link", "multi"]))
    if shape == "para":
        return f"<p>{text}</p>"
    if shape == "link":
        return f'<p><a href="{{site}}/{parts[0].split()[0]}">{text}</a></p>'
    if shape == "multi":
        return f"<h2>{parts[0]}</h2>  \n<p>{text}</p>\n\n"
    return text


@st.composite
def block(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["content", "html", "page_title", "horizontal_rule"]))
    if kind in ("content", "html"):
        return {"type": kind, "value": {"content": draw(html_text())}}
    if kind == "page_title":
        return {"type": kind, "value": {"useCustomTitle": draw(st.booleans()), "titleText": draw(WORDS)}}
    return {"type": kind}


@st.composite
def site(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    paths = draw(st.lists(st.sampled_from(["/", "/x", "/x/y", "/c", "/c/d"]), min_size=1, max_size=4, unique=True))
    paths = sorted({p for path in paths for p in _with_parents(path)})
    pages: dict[str, dict[str, Any]] = {}
    for path in paths:
        areas = draw(
            st.dictionaries(
                st.sampled_from(["Main", "Sidebar", "Footer Links"]), st.lists(block(), max_size=4), max_size=2
            )
        )
        page: dict[str, Any] = {"name": draw(WORDS).strip() or "Page", "areas": areas}
        if draw(st.booleans()):
            page["description"] = draw(WORDS)
        if draw(st.booleans()):
            page["attributes"] = {"exclude_nav": draw(st.booleans()), "meta_title": draw(WORDS)}
        pages[path] = page
    return pages


def _with_parents(path: str) -> list[str]:
    parts = path.strip("/").split("/") if path != "/" else []
    return ["/" + "/".join(parts[:n]) if n else "/" for n in range(len(parts) + 1)]


def _write(root: Path, pages: dict[str, dict[str, Any]], base_url: str) -> None:
    shutil.rmtree(root / "pages", ignore_errors=True)
    yaml = YAML()
    for path, page in pages.items():
        target = root / "pages" / ("index.yaml" if path == "/" else f"{path.strip('/')}.yaml")
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w") as stream:
            yaml.dump(_fill(page, base_url), stream)


def _fill(value: Any, base_url: str) -> Any:
    if isinstance(value, str):
        return value.replace("{site}", base_url)
    if isinstance(value, dict):
        return {k: _fill(v, base_url) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, base_url) for v in value]
    return value


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=site(), second=site())
def test_apply_then_plan_is_empty_for_any_content(
    first: dict[str, dict[str, Any]], second: dict[str, dict[str, Any]], sandbox_server: Sandbox, tmp_path_factory: Any
) -> None:
    sandbox_server.reset(seed="empty", dialect="concrete")
    root = tmp_path_factory.mktemp("site")
    (root / "cmssync.yaml").write_text("prune: {enabled: true, max_deletes: 100, max_fraction: 1}\n")
    target = Site(root, sandbox_server)
    for pages in (first, second):
        _write(root, pages, sandbox_server.url)
        report = asyncio.run(target.apply(replace_moved=True))
        assert not report.failed, target.last_output
        plan = asyncio.run(target.plan(replace_moved=True))
        assert plan.actions == (), [(a.kind, a.key, a.op, a.changes, a.blocks) for a in plan.actions]
