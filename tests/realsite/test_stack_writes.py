"""A stack edit of one update and three adds, killed half way on the real 9.3.1 site (issue 37 item 6).

Every write to a stack makes a version of its own there (``stack-writes.jsonl``). The apply runs in this process
through the reliability suite's fault proxy, which lets the second block add reach the site (it commits) and then
ends the run as SIGKILL would; the next ``cmssync apply`` (a subprocess, as a user runs it) must finish the edit:
every block once on the public pages, the plan empty.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from pathlib import Path

import pytest

from cmssync.sync.applying import ApplyRequest, apply_site
from cmssync.sync.workspace import open_workspace
from tests.realsite.harness import PublicSite, Report, SiteAccess, run_cmssync, shown_stacks
from tests.reliability.proxy import CorruptingProxy, Corruption, Killed, through


def test_a_stack_edit_killed_after_a_committed_add_is_finished_once(
    real_site: SiteAccess, public: PublicSite, content_dir: Path, report: Report, monkeypatch: pytest.MonkeyPatch
) -> None:
    pull = run_cmssync(real_site, content_dir, "pull")
    assert pull.code == 0, pull.output
    shown = shown_stacks(content_dir, public, ["/"])  # atomik_full: a footer column; elemental_full: its contact
    assert shown, f"no pulled stack's content shows on the home page: {pull.output}"
    stack = shown[0].file
    data = json.loads(json.dumps(_yaml_load(stack)))
    marker = f"stack-kill-{secrets.token_hex(3)}"
    blocks = data["areas"]["Main"]
    first = next(block for block in blocks if block.get("type") == "content")
    first["value"]["content"] += f"<p>{marker} updated</p>"
    blocks += [{"type": "content", "value": {"content": f"<p>{marker} added {n}</p>"}} for n in (1, 2, 3)]
    stack.write_text(json.dumps(data), encoding="utf-8")  # JSON is YAML

    for name, value in real_site.cmssync_env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CMSSYNC_TOKEN_CACHE", "off")
    kill = Corruption("second block add, then SIGKILL", "POST", r"/pages/\d+/Main$", kill=True, skip=1)
    with through(CorruptingProxy(kill)), pytest.raises(Killed):
        asyncio.run(apply_site(open_workspace(content_dir), ApplyRequest()))

    apply = run_cmssync(real_site, content_dir, "apply", "--yes")
    report.add("stack kill", apply)
    assert apply.code == 0, apply.output
    home = public.page("/").html
    shown = {text: home.count(f"{marker} {text}") for text in ("updated", "added 1", "added 2", "added 3")}
    report.note("stack kill", f"after the kill and the next apply the home page shows {shown}")
    assert shown == dict.fromkeys(shown, 1)
    plan = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode")
    assert plan.code == 0, plan.output


def _yaml_load(path: Path) -> object:
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))
