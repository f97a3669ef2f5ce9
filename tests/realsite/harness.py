"""Plain-HTTP access to a Concrete site (real or sandbox) for setting up and checking the issue-14 scenarios.

Nothing here goes through cmssync's client, observer or planner: the scenarios judge cmssync by what the site's
API and its *public pages* show, so a bug in cmssync's reading cannot hide a damaged site.

* :class:`SiteAccess` — where a site is and how to log in (password grant, like cmssync), and where its numeric
  file ids come from: the REST API only shows file UUIDs, but an editor's links and image blocks store numeric ids,
  so the real site's ids are read from its database (the env file's ``CONCRETE_DB``) and the sandbox's from its seed.
* :class:`RawApi` — a token and a few reads and writes of the REST API.
* :func:`public_links` — every link and image of a public page (``href``, ``src``, ``srcset``, ``url(...)`` in
  ``style``), resolved to absolute URLs; download links (``/download_file/view/…``) are followed one step, so a link
  is compared by the file it finally serves, not by how it is spelt.
* :func:`run_cmssync` — cmssync's CLI in a subprocess, as a user runs it, timed.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
from ruamel.yaml import YAML

SCOPES = (
    "account:read system:info:read sites:read files:read files:add files:update files:delete pages:read pages:add "
    "pages:update pages:delete pages:areas:add_block pages:areas:update_block pages:areas:delete_block "
    "pages:versions:read pages:versions:update pages:versions:delete blocks:read blocks:delete users:read users:add "
    "users:update users:delete groups:read groups:add"
)


@dataclass
class SiteAccess:
    """A site and its admin credentials (the password grant cmssync uses too)."""

    base_url: str
    client_id: str
    client_secret: str
    username: str
    password: str
    numeric_file_ids: Callable[[], dict[str, int]]
    """Lower-case file UUID → the file's numeric id (what ``{CCM:FID_DL_n}`` and image blocks store)."""
    request_count: Callable[[], int] | None = None
    """Requests the site has answered so far (the real site's request log), to count what a command cost."""
    api_prefix: str = "/ccm/api/1.0"

    def cmssync_env(self) -> dict[str, str]:
        """The environment a user gives cmssync for this site (cmssync.yaml holds no secrets)."""
        return {
            "CMSSYNC_URL": self.base_url,
            "CMSSYNC_CLIENT_ID": self.client_id,
            "CMSSYNC_CLIENT_SECRET": self.client_secret,
            "CMSSYNC_USERNAME": self.username,
            "CMSSYNC_PASSWORD": self.password,
        }


class RawApi:
    """The REST API with a password-grant token of its own; answers unwrapped from ``{"data": …}``."""

    def __init__(self, site: SiteAccess) -> None:
        self.site = site
        answer = httpx.post(
            f"{site.base_url}/oauth/2.0/token",
            data={
                "grant_type": "password",
                "client_id": site.client_id,
                "client_secret": site.client_secret,
                "username": site.username,
                "password": site.password,
                "scope": SCOPES,
            },
            timeout=60,
        )
        answer.raise_for_status()
        token = answer.json()["access_token"]
        self.http = httpx.Client(
            base_url=site.base_url + site.api_prefix,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            timeout=60,
        )

    def close(self) -> None:
        self.http.close()

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.http.request(method, path, **kwargs)
        if response.status_code >= 400:
            raise AssertionError(f"{method} {path} → {response.status_code}: {response.text[:500]}")
        body = response.json()
        if isinstance(body, dict) and body.get("error") and body.get("errors"):
            raise AssertionError(f"{method} {path} → error body {body['errors']}")
        return body["data"] if isinstance(body, dict) and "data" in body and set(body) <= {"data", "meta"} else body

    def tree(self, *, default_only: bool = False) -> dict[str, int]:
        """Path → id of every page of every locale tree (``default_only``: of the default tree), walked from each
        tree's home (the page list skips pages on a real site, and shows the default tree only on a multilingual
        one)."""
        default, *others = self.homes()
        found: dict[str, int] = {"/": default}
        queue = [default]
        for home in [] if default_only else others:
            found[self.call("GET", f"/pages/{home}")["path"]] = home
            queue.append(home)
        while queue:
            for child in self.call("GET", f"/pages/{queue.pop(0)}/children"):
                found[child["path"]] = int(child["id"])
                queue.append(int(child["id"]))
        return found

    def homes(self) -> list[int]:
        """The home page id of every locale tree of the site, the default tree's first."""
        site = self.call("GET", "/sites/default", params={"includes": "locales"})
        locales = site.get("locales") or []
        homes = [
            int(locale["home_page_id"])
            for locale in (locales.get("data", []) if isinstance(locales, dict) else locales)
        ]
        default = int(site.get("home_page_id") or 1)
        return [default, *(home for home in homes if home != default)]

    def blocks(self, page_id: int) -> list[Block]:
        """The blocks of a page's live version, area by area in the API's order."""
        page = self.call("GET", f"/pages/{page_id}", params={"includes": "areas"})
        areas = page.get("areas") or []
        areas = areas["data"] if isinstance(areas, dict) else areas
        result: list[Block] = []
        for area in areas:
            blocks = area["blocks"]["data"] if isinstance(area["blocks"], dict) else area["blocks"]
            for position, block in enumerate(blocks):
                result.append(Block(area["name"], position, block["type"], int(block["id"]), block["value"]))
        return result

    def add_block(self, page_id: int, area: str, block_type: str, value: Mapping[str, Any]) -> None:
        self.call("POST", f"/pages/{page_id}/{area}", json={"type": block_type, "value": dict(value)})

    def approve(self, page_id: int) -> None:
        """Publish the page's most recent version (what an editor's "Publish" does)."""
        recent = self.call("GET", f"/pages/{page_id}", params={"version": "recent"})
        version = recent["version"]["data"] if "data" in recent["version"] else recent["version"]
        self.call("PUT", f"/page_versions/{page_id}/{version['id']}", json={"is_approved": True})

    def files(self) -> list[dict[str, Any]]:
        items: dict[str, dict[str, Any]] = {}
        after: str | None = None
        while True:
            params: dict[str, Any] = {"limit": 100}
            if after is not None:
                params["after"] = after
            page = self.call("GET", "/files", params=params)
            fresh = [item for item in page if str(item["id"]).lower() not in items]
            if not fresh:
                return list(items.values())
            items.update({str(item["id"]).lower(): item for item in fresh})
            after = str(fresh[-1]["id"])


@dataclass(frozen=True)
class Block:
    area: str
    position: int
    type: str
    id: int
    value: Any


# --- public pages -------------------------------------------------------------------------------------------------

_URL_IN_STYLE = re.compile(r"url\(\s*['\"]?([^'\")]+)['\"]?\s*\)")
_LINK_ATTRIBUTES = {"href", "src", "srcset", "data-src", "data-srcset", "data-background", "poster"}
_IGNORED = re.compile(r"ccm_token=|/ccm/system/|/index\.php/tools/|#$")


class _LinkParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str, str]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("srcset", "data-srcset"):
                for candidate in value.split(","):
                    if candidate.strip():
                        self.found.append((tag, name, candidate.strip().split()[0]))
            elif name in _LINK_ATTRIBUTES:
                self.found.append((tag, name, value.strip()))
            elif name == "style":
                self.found += [(tag, "style", url) for url in _URL_IN_STYLE.findall(value)]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


@dataclass
class PublicPage:
    status: int
    links: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    """``(tag, attribute, resolved target)`` → how many times the page has it."""
    text: str = ""
    html: str = ""


class PublicSite:
    """Guest reads of public pages; download links are followed one step and remembered."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = httpx.Client(timeout=60, follow_redirects=False)
        self._targets: dict[str, str] = {}

    def close(self) -> None:
        self.http.close()

    def page(self, path: str) -> PublicPage:
        url = self.base_url + (path if path != "/" else "/")
        response = self.http.get(url, follow_redirects=True)
        parser = _LinkParser()
        parser.feed(response.text)
        links: Counter[tuple[str, str, str]] = Counter()
        for tag, attribute, raw in parser.found:
            if raw.startswith(("javascript:", "mailto:", "tel:", "data:")) or _IGNORED.search(raw):
                continue
            links[(tag, attribute, self.target(urljoin(url, raw)))] += 1
        return PublicPage(response.status_code, links, " ".join(" ".join(parser.text).split()), response.text)

    def target(self, url: str) -> str:
        """What a URL finally serves: a download link's redirect target or ``invalid-download:<url>``."""
        if "/download_file/" not in urlsplit(url).path:
            return url
        if url not in self._targets:
            response = self.http.get(url)
            if response.is_redirect:
                self._targets[url] = "download→" + urljoin(url, response.headers["location"])
            elif "Invalid File" in response.text:
                self._targets[url] = f"invalid-download:{url}"
            else:
                self._targets[url] = f"download-{response.status_code}:{url}"
        return self._targets[url]


def link_differences(before: PublicPage, after: PublicPage) -> list[str]:
    lost = before.links - after.links
    gained = after.links - before.links
    return [f"lost {t} {a}={u}" for (t, a, u) in lost] + [f"gained {t} {a}={u}" for (t, a, u) in gained]


# --- cmssync ------------------------------------------------------------------------------------------------------


@dataclass
class CommandRun:
    args: tuple[str, ...]
    code: int
    output: str
    seconds: float
    requests: int | None

    def line(self) -> str:
        cost = f", {self.requests} requests" if self.requests is not None else ""
        return f"cmssync {' '.join(self.args)} → exit {self.code} in {self.seconds:.1f} s{cost}"


def run_cmssync(site: SiteAccess, directory: Path, *args: str, timeout: float = 900) -> CommandRun:
    """``python3 -m cmssync ARGS DIRECTORY`` with the site's credentials in the environment."""
    env = {**os.environ, **site.cmssync_env(), "NO_COLOR": "1", "COLUMNS": "200"}
    before = site.request_count() if site.request_count else None
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "cmssync", "--log-format", "console", *args, str(directory)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    seconds = time.monotonic() - started
    after = site.request_count() if site.request_count else None
    requests = after - before if before is not None and after is not None else None
    return CommandRun(tuple(args), done.returncode, done.stdout + done.stderr, seconds, requests)


THEME_BLOCKS = Path(__file__).resolve().parent / "theme_blocks"


def install_block_type(site_dir: Path, handle: str) -> None:
    """Install ``theme_blocks/<handle>`` on the real site at ``site_dir`` as a site owner does: its files copied into
    ``application/blocks/<handle>``, then ``BlockType::installBlockType`` through ``c5:exec`` (when not installed)."""
    target = site_dir / "application" / "blocks" / handle
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(THEME_BLOCKS / handle, target)
    done = subprocess.run(
        ["php", "concrete/bin/concrete", "c5:exec", str(THEME_BLOCKS / "install.php"), handle],
        cwd=site_dir,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def write_settings(directory: Path, site: SiteAccess) -> None:
    """A ``cmssync.yaml`` for the site; credentials come from the environment (:meth:`SiteAccess.cmssync_env`)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "cmssync.yaml").write_text(
        f"site:\n  url: {site.base_url}\nauth:\n  grant: password\n  username: {site.username}\npublish: approve\n",
        encoding="utf-8",
    )


def page_files(directory: Path) -> Iterator[tuple[str, Path]]:
    """``(page path, file)`` of every page file a pull wrote."""
    root = directory / "pages"
    for file in sorted(root.rglob("*.yaml")):
        relative = file.relative_to(root).with_suffix("").as_posix()
        if relative == "index":
            yield "/", file
        else:
            yield "/" + relative.removesuffix("/index"), file


def visible_text(html: str) -> str:
    """The text of an HTML fragment as :class:`PublicPage` ``.text`` holds a page's: whitespace collapsed."""
    parser = _LinkParser()
    parser.feed(html)
    return " ".join(" ".join(parser.text).split())


@dataclass(frozen=True)
class ShownStack:
    file: Path
    """``stacks/<handle>.yaml``, whose ``Main`` area holds a content block."""
    text: str
    """Its first content block's text, as the public pages show it."""
    pages: frozenset[str]
    """The public pages that show that text."""


def shown_stacks(directory: Path, public: PublicSite, paths: Iterable[str]) -> list[ShownStack]:
    """The pulled stacks whose first content block in ``Main`` has text some of the public pages ``paths`` show
    (a theme's global areas: footer columns, contact details …), the most widely shown first. Any sample site or
    theme: which stacks a theme shows, and where, is read from its public pages, not assumed."""
    texts = {path: public.page(path).text for path in paths}
    found: list[ShownStack] = []
    for file in sorted((directory / "stacks").glob("*.yaml")):
        data = YAML(typ="safe").load(file.read_text(encoding="utf-8"))
        blocks = (data.get("areas") or {}).get("Main") if isinstance(data, dict) else None
        content = next((b for b in blocks or [] if isinstance(b, dict) and b.get("type") == "content"), None)
        text = (
            visible_text(str(content["value"]["content"])) if content and isinstance(content.get("value"), dict) else ""
        )
        if len(text) < 4:
            continue
        shown = frozenset(path for path, page_text in texts.items() if text in page_text)
        if shown:
            found.append(ShownStack(file, text, shown))
    return sorted(found, key=lambda stack: (-len(stack.pages), stack.file.name))


def reset_environment(site_env: Mapping[str, str]) -> dict[str, str]:
    """The environment of the reset script: the tested site's ``SITE_DIR`` and ``DB_NAME`` from its env file
    (``CONCRETE_SITE_DIR``; the database named last in ``CONCRETE_DB``), so the suite pointed at a second instance
    never resets the default one (``reset.sh`` without them resets ``/srv/concrete-site``)."""
    found: dict[str, str] = {}
    if site_env.get("CONCRETE_SITE_DIR"):
        found["SITE_DIR"] = site_env["CONCRETE_SITE_DIR"]
    words = shlex.split(site_env.get("CONCRETE_DB", ""))
    if len(words) > 1 and not words[-1].startswith("-"):
        found["DB_NAME"] = words[-1]
    return {**os.environ, **found}


def stack_ids(site_env: Mapping[str, str]) -> dict[str, int]:
    """The site's stacks, handle → page id, from its database (the env file's ``CONCRETE_DB``): the API lists no
    stack, and an editor picks one by name in the dashboard."""
    command = site_env.get("CONCRETE_DB")
    if not command:
        raise AssertionError("the env file has no CONCRETE_DB: the stacks' ids cannot be read")
    query = "SELECT cPath, cID FROM PagePaths WHERE cPath LIKE '/!stacks/%' AND cPath NOT LIKE '/!stacks/%/%'"
    done = subprocess.run(
        [*shlex.split(command), "-N", "-B", "-e", query], capture_output=True, text=True, check=True, timeout=60
    )
    found = (line.split("\t") for line in done.stdout.splitlines() if "\t" in line)
    return {path.removeprefix("/!stacks/"): int(cid) for path, cid in found}


def page_with_area(api: RawApi, area: str) -> tuple[str, int]:
    """The first page (by path, home left out) whose live version has blocks in ``area``: its path and id."""
    tree = api.tree()
    path = next(p for p in sorted(tree) if p != "/" and any(b.area == area for b in api.blocks(tree[p])))
    return path, tree[path]


def display_stacks(api: RawApi, page_id: int, area: str, *stack_ids: int) -> None:
    """Place the stacks ``stack_ids`` in ``area`` of a page, in order, and publish it, as an editor does from the
    dashboard's stacks panel."""
    for stack_id in stack_ids:
        api.add_block(page_id, area, "core_stack_display", {"stID": stack_id})
    api.approve(page_id)


def read_env_file(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` lines of a shell env file (quotes removed, ``# comments`` dropped)."""
    values: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, raw = line.partition("=")
        parts = shlex.split(raw, comments=True)
        values[key.strip()] = " ".join(parts) if parts else ""
    return values


class Report:
    """Measurements of the commands the scenarios ran (printed at the end, and written to CMSSYNC_REALSITE_REPORT)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.records: list[dict[str, object]] = []

    def add(self, scenario: str, run: CommandRun, **counts: object) -> None:
        self.lines.append(f"[{scenario}] {run.line()}" + "".join(f", {k}={v}" for k, v in counts.items()))
        record = {"scenario": scenario, "args": list(run.args), "exit": run.code, "seconds": round(run.seconds, 2)}
        self.records.append({**record, "requests": run.requests, **counts})

    def note(self, scenario: str, text: str) -> None:
        self.lines.append(f"[{scenario}] {text}")
        self.records.append({"scenario": scenario, "note": text})


def _yaml() -> YAML:
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    return yaml


def edit_page_file(file: Path, **changes: Any) -> None:
    yaml = _yaml()
    data = yaml.load(file.read_text(encoding="utf-8"))
    for key, value in changes.items():
        data[key] = value
    out = io.StringIO()
    yaml.dump(data, out)
    file.write_text(out.getvalue(), encoding="utf-8")


def pulled(real_site: SiteAccess, content_dir: Path, report: Report, scenario: str) -> None:
    """``cmssync pull`` into ``content_dir``, measured in ``report``; it must succeed."""
    pull = run_cmssync(real_site, content_dir, "pull")
    report.add(scenario, pull)
    assert pull.code == 0, pull.output


def walk_pages(api: RawApi, home_id: int) -> dict[str, int]:
    """Path → id of a home page and every page below it, through children lists."""
    home = api.call("GET", f"/pages/{home_id}")
    found = {home["path"] or "/": home_id}
    queue = [home_id]
    while queue:
        for child in api.call("GET", f"/pages/{queue.pop(0)}/children"):
            found[child["path"]] = int(child["id"])
            queue.append(int(child["id"]))
    return found


def pulled_paths(directory: Path) -> set[str]:
    """The page paths of the page files a pull wrote."""
    paths = set()
    for file in (directory / "pages").rglob("*.yaml"):
        relative = file.relative_to(directory / "pages").with_suffix("").as_posix()
        paths.add("/" if relative == "index" else "/" + relative.removesuffix("/index"))
    return paths


def mark_first_content_block(file: Path, marker: str) -> str | None:
    """Put ``marker`` at the start of the first editable content block of the file; the block's area, None when the
    file has no such block."""
    yaml = _yaml()
    data = yaml.load(file.read_text(encoding="utf-8"))
    for area, blocks in (data.get("areas") or {}).items():
        for block in blocks:
            if block.get("type") == "content" and isinstance(block.get("value"), dict):
                block["value"]["content"] = f"<p>{marker}</p>" + str(block["value"].get("content") or "")
                with file.open("w", encoding="utf-8") as stream:
                    yaml.dump(data, stream)
                return str(area)
    return None


def plan_is_empty(site: SiteAccess, directory: Path, report: Report, label: str, *flags: str) -> None:
    """``plan --detailed-exitcode`` (after ``flags``: global options such as ``--site``) exits 0."""
    plan = run_cmssync(site, directory, *flags, "plan", "--detailed-exitcode")
    report.add(label, plan)
    assert plan.code == 0, plan.output
