"""What the report's sandboxed previews show: block HTML made renderable, images resolved, the frame's policy.

Pure. A block's stored HTML names the site as ``{CCM:BASE_URL}`` (the server's LinkAbstractor form, see
``cmssync.plan.normalize``); it is expanded to the plan's site URL, so existing files' images load from the site's
public URL. A file the plan is about to upload has no URL yet: its reference stays ``${file:PATH}`` in the plan and
the report substitutes a ``data:`` URI made from the content's bytes, which the caller reads and passes in
(:func:`files_wanted` says which). Images are inlined within :data:`MAX_IMAGE_BYTES` each and
:data:`IMAGE_BUDGET` in all; beyond that, and for files the caller could not read, a small grey placeholder says
why.

The report's Content-Security-Policy (:func:`report_policy`) allows only the report's own script (by hash), inline
styles, and images from ``data:`` and the site's origin; ``srcdoc`` frames inherit it, and each preview also carries
it in its own ``<meta>``. Content never runs: frames are ``sandbox=""`` (no scripts, no same origin, no forms,
no popups) and the policy has no script source for them.
"""

from __future__ import annotations

import base64
import html
import mimetypes
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from cmssync.plan.actions import Action, Plan
from cmssync.plan.normalize import BASE_URL_PLACEHOLDER
from cmssync.render.html.worddiff import visible_text

MAX_IMAGE_BYTES = 400_000
"""A larger image is not inlined (the report must stay small enough to open quickly and attach to a PR)."""
IMAGE_BUDGET = 3_000_000
"""Bytes of images inlined in one report, in all."""
PREVIEW_FIELDS = ("content",)
"""Block fields shown rendered (the HTML of ``content`` and ``html`` blocks); other fields are shown as text."""

FILE_REFERENCE = re.compile(r"\$\{file:([^{}]*)\}")
_IMAGE_TAG = re.compile(r"<img\b[^>]*>", re.IGNORECASE)
_HEIGHT_ATTRIBUTE = re.compile(r"""\bheight\s*=\s*["']?(\d{1,4})""", re.IGNORECASE)
_HEADING = re.compile(r"<h[1-3]\b", re.IGNORECASE)
_BLOCK_TAG = re.compile(r"<(?:p|div|h[1-6]|li|tr|br|hr|blockquote|pre|figure)\b", re.IGNORECASE)
_HOST_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?")
_IPV6 = re.compile(r"[0-9A-Fa-f:.]{2,45}")


def site_origin(site: str) -> str | None:
    """``scheme://host[:port]`` of the plan's site, or None when it is not a well-formed http(s) URL.

    The origin is rebuilt from the parsed host name and port, never copied from the string: a plan file is input (it
    may have been edited), and what goes into the report's policy must not be able to add a directive or a source.
    """
    parts = urlsplit(site.strip())
    if parts.scheme not in ("http", "https"):
        return None
    try:
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is no number or out of range
        return None
    if host is None or not (_HOST_NAME.fullmatch(host) or (":" in host and _IPV6.fullmatch(host))):
        return None
    shown = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{shown}" + (f":{port}" if port is not None else "")


def report_policy(site: str, script_hash: str) -> str:
    """The report's Content-Security-Policy (see the module docstring)."""
    origin = site_origin(site)
    images = "data:" + (f" {origin}" if origin else "")
    return (
        f"default-src 'none'; script-src '{script_hash}'; style-src 'unsafe-inline'; img-src {images}; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


def frame_head(site: str) -> str:
    """The head every preview document starts with: its own policy, no referrer, a neutral page style."""
    origin = site_origin(site)
    images = "data:" + (f" {origin}" if origin else "")
    policy = f"default-src 'none'; style-src 'unsafe-inline'; img-src {images}; form-action 'none'"
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">'
        '<meta name="referrer" content="no-referrer"><style>html{color-scheme:light}'
        "body{margin:10px;font:15px/1.5 system-ui,sans-serif;color:#1b1b1b;background:#fff}"
        "img,video{max-width:100%;height:auto}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 4px}"
        "</style></head><body>"
    )


def renderable(fragment: str, site: str) -> str:
    """A block's HTML as the site would serve it: ``{CCM:BASE_URL}`` expanded to the site's URL."""
    return fragment.replace(BASE_URL_PLACEHOLDER, site.rstrip("/"))


def estimated_height(fragment: str) -> int:
    """A first height for a preview frame in CSS pixels (frames cannot be measured: they share no origin)."""
    text = len(visible_text(fragment))
    lines = text / 65 + len(_BLOCK_TAG.findall(fragment)) * 1.3 + len(_HEADING.findall(fragment)) * 1.2
    height = 36 + int(lines * 24) + sum(_image_height(tag) for tag in _IMAGE_TAG.findall(fragment))
    return max(70, min(height, 520))


def _image_height(tag: str) -> int:
    """An image's own ``height`` attribute when it has one (at most 400), else a guess."""
    found = _HEIGHT_ATTRIBUTE.search(tag)
    return min(int(found.group(1)), 400) + 8 if found else 120


def files_wanted(plan: Plan) -> list[str]:
    """Content file paths whose bytes make the report complete: new files referenced by blocks, new images."""
    wanted: dict[str, None] = {}
    for action in plan.actions:
        for path in _references(action):
            wanted[path] = None
        if action.kind == "file" and action.op in ("create", "replace") and is_image(action.key):
            wanted[action.key] = None
    return list(wanted)


def _references(action: Action) -> Iterable[str]:
    for block in action.blocks:
        for values in (block.before, block.after):
            for value in (values or {}).values():
                yield from FILE_REFERENCE.findall(value)


def is_image(path: str) -> bool:
    kind, _ = mimetypes.guess_type(path, strict=False)
    return kind is not None and kind.startswith("image/")


@dataclass
class InlineImages:
    """The ``data:`` URIs of a report, within the budgets; ``skipped`` says why the others are not inlined."""

    uris: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


def inline_images(wanted: Iterable[str], files: Mapping[str, bytes]) -> InlineImages:
    result = InlineImages()
    spent = 0
    for path in wanted:
        kind, _ = mimetypes.guess_type(path, strict=False)
        data = files.get(path)
        if kind is None or not kind.startswith("image/"):
            result.skipped[path] = "not an image"
        elif data is None:
            result.skipped[path] = "not available to the report"
        elif len(data) > MAX_IMAGE_BYTES:
            result.skipped[path] = f"too large to inline ({len(data):,} bytes)"
        elif spent + len(data) > IMAGE_BUDGET:
            result.skipped[path] = "over the report's image budget"
        else:
            spent += len(data)
            result.uris[path] = f"data:{kind};base64,{base64.b64encode(data).decode('ascii')}"
    for path, reason in result.skipped.items():
        result.uris.setdefault(path, placeholder_image(f"{path}: {reason}"))
    return result


def placeholder_image(label: str) -> str:
    """A grey box naming the image that could not be shown, as an SVG ``data:`` URI (SVG in <img> runs nothing)."""
    text = html.escape(label[:80])
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="320" height="60" viewBox="0 0 320 60">'
        '<rect width="320" height="60" fill="#e5e5e5" stroke="#999"/>'
        f'<text x="8" y="34" font-family="sans-serif" font-size="11" fill="#444">{text}</text></svg>'
    )
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
