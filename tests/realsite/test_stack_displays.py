"""Issue 36 item 3 on a real site: a stack display (a stack an editor placed in a page's area) is a typed block
naming the stack by handle, pulled, planned, written and shown.

An editor marks two of the site's stacks (a content block with a marker each, published) and places the first in
``Main`` of a page (``core_stack_display``, as from the dashboard's stacks panel); ``pull`` writes the display as
``{type: core_stack_display, value: {stack: <its handle>}}`` (the API reads it as ``value: []``: cmssync names the
stack from the page's rendering); ``plan`` is empty; the file is edited to show the second stack; ``apply --yes``;
the public page then shows the second stack's marker once more and the first's once less; the next plan is empty.
The same scenario runs against the sandbox in ``tests/e2e/test_stack_displays.py``.
"""

from __future__ import annotations

from pathlib import Path

from ruamel.yaml import YAML

from tests.realsite.harness import (
    PublicSite,
    RawApi,
    Report,
    SiteAccess,
    display_stacks,
    page_files,
    page_with_area,
    pulled,
    run_cmssync,
)

MARKER = "cmssync-stack-display"


def test_a_stack_display_is_pulled_pointed_at_another_stack_and_shown(
    real_site: SiteAccess, stacks: dict[str, int], api: RawApi, public: PublicSite, content_dir: Path, report: Report
) -> None:
    (first, first_id), (second, second_id) = sorted(stacks.items(), key=lambda item: item[1])[-2:]
    for handle, stack_id in ((first, first_id), (second, second_id)):
        api.add_block(stack_id, "Main", "content", {"content": f"<p>{MARKER}-{handle}</p>"})
        api.approve(stack_id)
    path, page_id = page_with_area(api, "Main")
    display_stacks(api, page_id, "Main", first_id)
    before = public.page(path).html

    pulled(real_site, content_dir, report, "stack-displays")
    file = dict(page_files(content_dir))[path]  # pages/<path>.yaml, or pages/<path>/index.yaml for a parent
    written = YAML(typ="safe").load(file.read_text(encoding="utf-8"))["areas"]["Main"]
    assert {"type": "core_stack_display", "value": {"stack": first}} in written, written
    plan = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode")
    report.add("stack-displays", plan)
    assert plan.code == 0, plan.output

    text = file.read_text(encoding="utf-8")
    assert text.count(f"stack: {first}\n") == 1, text
    file.write_text(text.replace(f"stack: {first}\n", f"stack: {second}\n"), encoding="utf-8")
    apply = run_cmssync(real_site, content_dir, "apply", "--yes")
    report.add("stack-displays", apply)
    assert apply.code == 0, apply.output
    after = public.page(path).html
    assert after.count(f"{MARKER}-{second}") == before.count(f"{MARKER}-{second}") + 1
    assert after.count(f"{MARKER}-{first}") == before.count(f"{MARKER}-{first}") - 1

    again = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode")
    report.add("stack-displays", again)
    assert again.code == 0, again.output
