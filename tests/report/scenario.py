"""Content for the report tests: content-example bound to the sandbox, its edit scenario, and synthetic plans.

The edit scenario is what a reviewer meets after content-example has been applied: text edited in place, an image
swapped for a new file (inlined from the content), a block removed, a block added, a page field changed. The
hostile block holds a ``<script>`` and ``onerror=`` handlers that would set a ``data-pwned`` marker if they ran.
"""

from __future__ import annotations

import asyncio
import struct
import zlib
from pathlib import Path
from typing import Any

from cmssync.commands.plan import render
from cmssync.emulator.embedded import Sandbox
from cmssync.plan.actions import Action, BlockChange, FieldChange, Plan
from cmssync.sync.applying import ApplyRequest, apply_site
from cmssync.sync.planning import make_plan
from cmssync.sync.workspace import Workspace
from tests.support.sites import Site

HOSTILE = (
    "<p>Hostile block.</p>"
    "<script>document.documentElement.setAttribute('data-pwned-script', '1');"
    "try { parent.document.documentElement.setAttribute('data-pwned-parent', '1') } catch (e) {}</script>"
    '<img src="no-such-image.png" alt="x" onerror="document.documentElement.setAttribute(\'data-pwned-onerror\', 1)">'
    '<svg><image href="nothing.png" onerror="document.documentElement.setAttribute(\'data-pwned-svg\', 1)"/></svg>'
    '<a href="javascript:document.documentElement.setAttribute(\'data-pwned-link\', 1)" id="bad">link</a>'
    "<iframe srcdoc=\"&lt;script&gt;document.documentElement.setAttribute('data-pwned-nested', 1)"
    '&lt;/script&gt;"></iframe>'
)
"""Each payload sets its own ``data-pwned-*`` attribute when it runs."""


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A solid-colour PNG, made here so the test needs no image library."""
    row = b"\x00" + bytes(rgb) * width
    raw = zlib.compress(row * height)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


def overrides(root: Path, sandbox: Sandbox) -> dict[str, Any]:
    return Site(root, sandbox).overrides()


def workspace(root: Path, sandbox: Sandbox) -> Workspace:
    return Site(root, sandbox).workspace()


def edit(root: Path) -> None:
    """The edit scenario (see the module docstring), written into an applied copy of content-example."""
    (root / "files/images/banner.png").write_bytes(png(120, 40, (230, 120, 20)))
    (root / "files/images/banner.png.yaml").write_text("title: Banner\nfolder: images\n")
    index = root / "pages/index.yaml"
    text = index.read_text()
    text = text.replace("${file:images/logo.png}", "${file:images/banner.png}")
    text = text.replace('width="16" height="16"', 'width="120" height="40"')
    text = text.replace("schools, clubs and small businesses", "schools, charities and small businesses")
    index.write_text(text)
    about = root / "pages/about.yaml"
    text = about.read_text().replace("Who we are and how we work.", "Who we are, and how we work with you.")
    text = text.replace(
        "tired of sites nobody could update.</p>",
        "tired of sites nobody could update.</p>\n          <p>We now look after forty sites.</p>",
    )
    about.write_text(text)
    services = root / "pages/services.yaml"
    text = services.read_text()
    training = text.index("    - type: content\n      value:\n        content: |\n          <h2>Training</h2>")
    end = text.index("    - type: html", training)
    text = text[:training] + text[end:]
    text = text.replace(
        "  Sidebar:\n    - type: content",
        "    - type: content\n      value:\n"
        "        content: <h2>Hosting</h2><p>Managed <b>Concrete CMS</b> hosting.</p>\n"
        "  Sidebar:\n    - type: content",
    )
    services.write_text(text)


def hostile_page(root: Path) -> None:
    """A page whose only block is :data:`HOSTILE`, and whose name tries to break out of the report's markup."""
    (root / "pages/hostile.yaml").write_text(
        "name: '<img src=x onerror=\"document.documentElement.setAttribute(`data-pwned-name`, 1)\">'\n"
        "areas:\n  Main:\n    - type: html\n      value:\n        content: |\n"
        + "".join(f"          {line}\n" for line in HOSTILE.split("\n"))
    )


def big_plan(pages: int, *, site: str = "https://www.example.org") -> Plan:
    """A plan of ``pages`` page updates, each with a field change and two changed blocks of realistic size."""
    actions = []
    for n in range(pages):
        intro = (
            f"<h2>Section {n}</h2><p>Our team of <strong>{n % 40 + 2} people</strong> builds websites for schools, "
            "clubs and small businesses. Each project starts with a workshop where we listen to the people who will "
            f'keep the site up to date. <a href="{{CCM:BASE_URL}}/services/item-{n}">Read more</a>.</p>'
        )
        body = (
            "<p>Training covers the editor, images, page types and publishing workflows. Sessions run on site "
            f'or remotely and last half a day.</p><p><img src="{{CCM:BASE_URL}}/application/files/{n}/photo.png" '
            'alt="photo" width="200" height="120"></p>'
        )
        actions.append(
            Action(
                kind="page",
                key=f"/section-{n // 50}/page-{n}",
                op="update",
                changes=(FieldChange(field="description", before=f"Page {n}.", after=f"Page number {n}."),),
                blocks=(
                    BlockChange(
                        area="Main",
                        op="update",
                        position=1,
                        block_type="content",
                        block_id=10 * n + 1,
                        before={"content": intro},
                        after={"content": intro.replace("small businesses", "charities").replace("listen", "talk")},
                    ),
                    BlockChange(
                        area="Main",
                        op="update",
                        position=2,
                        block_type="content",
                        block_id=10 * n + 2,
                        before={"content": body},
                        after={"content": body.replace("half a day", "a full day").replace("remotely", "online")},
                    ),
                ),
            )
        )
    return Plan(site=site, content_digest="sha256:" + "0" * 64, actions=tuple(actions))


def edit_scenario_report(root: Path, sandbox: Sandbox, out: Path, *, hostile: bool = False) -> Path:
    """content-example applied, then edited (and given the hostile page): the report of what is left to do."""
    report = asyncio.run(apply_site(workspace(root, sandbox), ApplyRequest()))
    assert not report.failed
    edit(root)
    if hostile:
        hostile_page(root)
    plan = asyncio.run(make_plan(workspace(root, sandbox))).plan
    out.write_text(render(plan, "html", color=False, content_dir=root))
    return out
