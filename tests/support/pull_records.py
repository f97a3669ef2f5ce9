"""What pull recorded, checked against the content as the planner loads it."""

from __future__ import annotations

from collections import Counter

from cmssync.plan.conflicts import page_base
from cmssync.plan.desired import Resolver
from cmssync.plan.page_form import page_form, render_desired
from cmssync.sync.pull_record import staged_form
from tests.support.sites import Site


def recorded_as_loaded(site: Site) -> Counter[bool]:
    """Each page's digest and base, recorded by pull from what it staged or read back, are what the whole content,
    loaded as the planner loads it, gives; how many pages were recorded from what was staged (True) or not."""
    workspace = site.workspace()
    state, content = workspace.load_state(), workspace.content
    resolve = Resolver(
        file_urls={path: record.url for path, record in state.files.items()},
        file_ids={path: str(record.id) for path, record in state.files.items()},
        page_ids={path: record.id for path, record in state.pages.items()},
    )
    ways = Counter[bool]()
    for path, record in state.pages.items():
        desired = render_desired(page_form(content.pages[path]), path, resolve, base_url=site.sandbox.url)
        assert record.digest == desired.digest, path
        assert record.base is not None, path
        # the site's description and attributes the content leaves out are recorded too, as the site had them
        site_only = {name: value for name, value in record.base.fields.items() if name not in desired.fields}
        site_only.pop("publish_end_date", None)
        assert all(name == "description" or name.startswith("attributes.") for name in site_only), site_only
        assert record.base == page_base(desired.fields, desired.areas, desired.end_date, site_only), path
        ways[staged_form(content.pages[path], path, resolve, site.sandbox.url, site_only) is not None] += 1
    return ways
