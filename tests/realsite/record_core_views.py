"""Record how a theme that overrides no block view renders a content block: ``python -m
tests.realsite.record_core_views ENV_FILE OUT`` (OUT: ``tests/conformance/concrete-9.3.1/core-views.jsonl``).

Opt-in, against a freshly reset real Concrete 9.3.1 site of ``../shared/realsite/`` installed with
``STARTING_POINT=elemental_full`` (instance 8095 of issue 36). Scenario ``core-views``: the blog entry
``/blog/hello-world`` read with ``includes=areas,areas.content`` (its ``Main`` holds a page title and a content block
with a download link by a digit-led UUID around a picture: ``{CCM:FID_DL_4ee0f842-…}``, ``<concrete-picture
fid="16" />``). The ``elemental`` theme leaves Concrete's own content view, which prints the HTML
alone: no ``ccm-block-content`` wrapper, as ``atomik``'s view has, to tell one block's output from the next. Only
HTTP, plus ``mysql`` to find the page's id (the env's ``CONCRETE_DB``).
"""

from __future__ import annotations

import sys

from tests.realsite.record_lists import PREFIX, Recorder, record

PATH = "/blog/hello-world"


class CoreViewsRecorder(Recorder):
    def core_views(self) -> None:
        self.scenario = "core-views"
        page = int(self.sql(f"SELECT cID FROM PagePaths WHERE cPath = '{PATH}'")[0][0])
        self.call("read.areas_content", "GET", f"{PREFIX}/pages/{page}", params={"includes": "areas,areas.content"})


if __name__ == "__main__":
    sys.exit(record(sys.argv[1:], CoreViewsRecorder, CoreViewsRecorder.core_views))
