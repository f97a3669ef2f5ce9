"""The sandbox renders a theme that overrides no block view (a seed's ``block_views: core``) as the real 9.3.1
``elemental_full`` site did in ``tests/conformance/concrete-9.3.1/core-views.jsonl`` (recorded with
``tests/realsite/record_core_views.py``): a content block's rendered area holds its HTML alone — no
``ccm-block-content`` wrapper to split an area's rendering by — with its download link by UUID as
``/download_file/view/<uuid>``, while the block's read exports the link as the file whose numeric id is the UUID's
leading digits. What pull recovers the link from (``cmssync.plan.references.rendered_in_order``) is the same on both."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx

from cmssync.emulator.embedded import Sandbox
from cmssync.plan.references import rendered_in_order
from tests.support.file_seeds import LIGHTBOX, LIGHTBOX_CONTENT, LIGHTBOX_FILES, PAGE_TITLE, content, home_seed
from tests.support.tokens import sandbox_token

RECORDING = Path(__file__).resolve().parents[1] / "conformance" / "concrete-9.3.1" / "core-views.jsonl"
SEED = home_seed(PAGE_TITLE, content(LIGHTBOX_CONTENT), files=LIGHTBOX_FILES, name="Hello World!", block_views="core")


def _main(page: dict[str, Any]) -> tuple[list[str], str, str]:
    """Main's block types, its content block's value and its rendered HTML."""
    area = next(a for a in page["areas"]["data"] if a["name"] == "Main")
    blocks = area["blocks"]["data"]
    content = next(b["value"]["content"] for b in blocks if b["type"] == "content")
    return [b["type"] for b in blocks], content, area["content"]["data"]["raw"]


def _facts(page: dict[str, Any]) -> tuple[Any, ...]:
    types, content, raw = _main(page)
    exported = re.findall(r"\{ccm:export:file:\d+:([^{}]+)\}", content)
    recovered = rendered_in_order(raw, [content])
    return (
        types,
        "ccm-block-content" in raw,
        [m.split("/")[0] for m in re.findall(r"/download_file/view/([^\"'?#\s]+)", raw)],
        len(exported),
        "<concrete-picture file=" in content,
        recovered is not None and recovered[0].downloads == (LIGHTBOX,),
    )


def test_a_theme_without_block_view_overrides_renders_as_recorded(sandbox: Sandbox, tmp_path: Path) -> None:
    recorded = json.loads(RECORDING.read_text(encoding="utf-8").splitlines()[0])["response"]["body"]["data"]
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(SEED), encoding="utf-8")
    sandbox.reset(seed=str(seed), dialect="concrete")
    token = sandbox_token(sandbox, "pages:read")
    with httpx.Client(base_url=sandbox.api_url, headers={"Authorization": f"Bearer {token}"}) as http:
        answer = http.get("/pages/1", params={"includes": "areas,areas.content"})
    answer.raise_for_status()
    facts = _facts(answer.json()["data"])
    assert facts == _facts(recorded)
    assert facts == (["page_title", "content"], False, [LIGHTBOX], 1, True, True)
