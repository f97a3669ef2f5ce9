"""The HTML plan report with the images it inlines.

The renderer (:mod:`cmssync.render.html`) takes the bytes of the images; this reads them. Images of files a plan
uploads are read from the content directory (``files/PATH``), never from outside it, or taken from the bytes a
saved plan carries, and only up to the renderer's size limit; a missing or refused file shows as a named
placeholder in the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from cmssync.plan.actions import Plan
from cmssync.render.html import files_wanted, render_html
from cmssync.render.html.preview import MAX_IMAGE_BYTES


def report_files(plan: Plan, content_dir: Path) -> dict[str, bytes]:
    """The bytes of the content files the report wants (new images), read from ``content_dir/files``.

    A path that leaves ``files/`` (a hand-edited plan file), a missing file or an oversized one is left out.
    """
    root = (content_dir / "files").resolve()
    found: dict[str, bytes] = {}
    for name in files_wanted(plan):
        path = (root / name).resolve()
        if not path.is_relative_to(root):
            continue
        try:
            if path.stat().st_size > MAX_IMAGE_BYTES:
                continue
            found[name] = path.read_bytes()
        except OSError:
            continue
    return found


def html_report(plan: Plan, content_dir: Path | None, uploads: Mapping[str, bytes] | None = None) -> str:
    """The report of ``plan``, with the new images of ``content_dir`` inlined when it is given, else those of
    ``uploads`` (the bytes a plan file carries, by content path)."""
    if content_dir is not None:
        return render_html(plan, files=report_files(plan, content_dir))
    if uploads is not None:
        wanted = set(files_wanted(plan))
        return render_html(plan, files={p: b for p, b in uploads.items() if p in wanted and len(b) <= MAX_IMAGE_BYTES})
    return render_html(plan, files=None)
