"""Issue 35 item 2 on a real Concrete CMS 9.3.1 installation made multi-site (opt-in: see conftest.py).

The fixture makes the freshly reset kit site a multi-site installation with a second site ``second`` through
Concrete's own services (``tests/realsite/add_site.sh``: a home with a content block, ``/about`` and ``/contact``
with one each; its canonical URL ``http://second.localhost:<port>/``, so requests with that host are about it) and
puts the single site back afterwards (``add_site.sh --reset``: the file config it changed, then the reset script).

* ``cmssync --site second pull`` takes exactly the second site's pages (walked from its home through the REST API),
  its home as ``pages/index.yaml``; the plan right after is empty; a run without ``--site`` on that state is refused;
* an edit of its ``/about`` shows on the second site's ``/about`` and not on the default site's ``/about``; a new page
  file is created under the second site's home; the next plan is empty;
* the default site's pull on the multi-site installation takes the default site's pages and nothing of the second.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.realsite.harness import (
    RawApi,
    Report,
    SiteAccess,
    mark_first_content_block,
    plan_is_empty,
    pulled_paths,
    reset_environment,
    run_cmssync,
    walk_pages,
    write_settings,
)

ADD_SITE = Path(__file__).resolve().parent / "add_site.sh"


def _add_site(realsite_env: dict[str, str], *args: str) -> None:
    env = {**reset_environment(realsite_env), "REALSITE_RESET_SCRIPT": os.environ["CMSSYNC_REALSITE_RESET"]}
    done = subprocess.run([str(ADD_SITE), *args], env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture
def second_host(real_site: SiteAccess, realsite_env: dict[str, str]) -> Iterator[str]:
    """The installation made multi-site; the host whose requests are about the second site."""
    host = f"second.localhost:{urlsplit(real_site.base_url).port}"
    _add_site(realsite_env, "second", f"canonical_url=http://{host}/")
    try:
        yield host
    finally:
        _add_site(realsite_env, "--reset")


def _public(site: SiteAccess, path: str, host: str | None = None) -> httpx.Response:
    headers = {"host": host} if host else {}
    return httpx.get(site.base_url.rstrip("/") + path, headers=headers, timeout=60, follow_redirects=True)


def test_a_second_site_is_pulled_edited_and_extended_in_its_own_directory(
    real_site: SiteAccess, second_host: str, api: RawApi, tmp_path: Path, report: Report
) -> None:
    sites = api.call("GET", "/sites")
    assert [site["handle"] for site in sites] == ["default", "second"]
    second_home = int(sites[1]["home_page_id"])
    second_pages = walk_pages(api, second_home)
    default_pages = walk_pages(api, int(sites[0]["home_page_id"]))
    assert "/about" in second_pages
    assert "/" in set(second_pages) & set(default_pages)  # paths repeat across the sites (/about too on atomik_full)

    directory = tmp_path / "second"
    write_settings(directory, real_site)
    pull = run_cmssync(real_site, directory, "--site", "second", "pull")
    report.add("sites: pull --site second", pull, pages=len(second_pages))
    assert pull.code == 0, pull.output
    assert "site second: its pages are this directory's" in pull.output
    assert pulled_paths(directory) == set(second_pages)
    assert (directory / "pages/index.yaml").read_text(encoding="utf-8").splitlines()[0] == "name: Second Site"
    plan_is_empty(real_site, directory, report, "sites: plan --site second after pull", "--site", "second")
    refused = run_cmssync(real_site, directory, "plan")
    assert refused.code != 0
    assert "state was recorded for site 'second' of the installation, not the default site" in refused.output

    rid = secrets.token_hex(4)
    marker, new_marker = f"SITE-EDIT-{rid}", f"SITE-NEW-{rid}"
    assert mark_first_content_block(directory / "pages/about.yaml", marker)
    new_page = f"/cmssync-site-{rid}"
    (directory / "pages" / f"{new_page.strip('/')}.yaml").write_text(
        f"name: Site page {rid}\ntype: page\ntemplate: full\nareas:\n  Main:\n    - type: content\n"
        f"      value:\n        content: <p>{new_marker}</p>\n",
        encoding="utf-8",
    )
    apply = run_cmssync(real_site, directory, "--site", "second", "apply", "--yes")
    report.add("sites: edit and new page in the second site", apply)
    assert apply.code == 0, apply.output
    assert marker in _public(real_site, "/about", second_host).text
    assert marker not in _public(real_site, "/about").text
    created = _public(real_site, new_page, second_host)
    assert (created.status_code, new_marker in created.text) == (200, True)
    assert new_page in {child["path"] for child in api.call("GET", f"/pages/{second_home}/children")}
    plan_is_empty(real_site, directory, report, "sites: plan --site second after apply", "--site", "second")

    default_dir = tmp_path / "default"
    write_settings(default_dir, real_site)
    pull = run_cmssync(real_site, default_dir, "pull")
    report.add("sites: the default site's pull on a multi-site installation", pull, pages=len(default_pages))
    assert pull.code == 0, pull.output
    assert pulled_paths(default_dir) == set(default_pages)
    assert not any(
        "Second Site" in file.read_text(encoding="utf-8") for file in (default_dir / "pages").rglob("*.yaml")
    )
