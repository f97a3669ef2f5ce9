"""Blocks built around a file or a link: image, hero image, features, testimonial, file, video, YouTube, map, and the
image slider and gallery, whose entries the API never shows (see :mod:`.model`)."""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping

from cmssync.emulator import markup
from cmssync.emulator.blocktypes.model import Args, BlockType, Where, flag, int_value, link_picker, php_string


def _image_save(args: Args, where: Where) -> Args:
    """The image controller: sizes only with ``constrain_size``, ``cropImage`` on when the key is present at all,
    the link chooser for the three link columns; the file id goes to the database as sent (``strict_file``)."""
    constrain = str(args.get("sizingOption", "thumbnails_default")) == "constrain_size"
    args["cropImage"] = 1 if "cropImage" in args and constrain else 0
    for size in ("maxWidth", "maxHeight"):
        args[size] = max(int_value(args.get(size)), 0) if constrain else 0
    args = link_picker(args, page="internalLinkCID", file="fileLinkID", url="externalLink")
    args["openLinkInNewWindow"] = int(flag(args.get("openLinkInNewWindow")))
    args["lazyLoad"] = int(flag(args.get("lazyLoad")))
    return args


def _image_validate(args: Args) -> list[str | tuple[str, str]]:
    errors: list[str | tuple[str, str]] = []
    if str(args.get("fID") or "") in ("", "0"):
        errors.append("You must select an image.")
    if "cropImage" in args and (int_value(args.get("maxWidth")) <= 0 or int_value(args.get("maxHeight")) <= 0):
        errors.append("Cropping an image requires setting a max width and max height.")
    return errors


def _feature_save(args: Args, where: Where) -> Args:
    """``linkType`` 1 keeps the page link, 2 the external one, anything else clears both; the paragraph goes through
    ``LinkAbstractor::translateTo`` (and is exported as stored)."""
    kind = int_value(args.get("linkType"))
    if kind != 1:
        args["internalLinkCID"] = 0
    if kind != 2:
        args["externalLink"] = ""
    args["internalLinkCID"] = int_value(args.get("internalLinkCID"))
    args["paragraph"] = markup.translate_to(php_string(args.get("paragraph")), where.base_url)
    args["fID"] = args.get("fID") if str(args.get("fID") or "") != "" else 0
    return args


def _button_save(args: Args, where: Where) -> Args:
    """Hero image and feature link: the button's link through the link chooser."""
    return link_picker(args, page="buttonInternalLinkCID", file="buttonFileLinkID", url="buttonExternalLink")


def _feature_link_save(args: Args, where: Where) -> Args:
    args = _button_save(args, where)
    args["fID"] = args.get("fID") if str(args.get("fID") or "") != "" else 0
    return args


def _render_hero(record: Mapping[str, str], expand: Callable[[str], str], page_name: str) -> str:
    """The title shows only when the image is a file (blocks.jsonl: after a write-back stored 0, the ``/resources``
    hero lost its heading and background)."""
    image = expand("{CCM:FID_" + record.get("image", "0") + "}") if record.get("image") not in ("", "0") else ""
    if not image:
        return '\n\n    <div class="ccm-block-hero-image"></div>\n'
    tag = record.get("titleFormat") or "h1"
    return (
        f'\n\n    <div class="ccm-block-hero-image" style="background-image: url({html.escape(image)})">'
        f"<{tag}>{html.escape(record.get('title', '').strip())}</{tag}>{record.get('body', '')}</div>\n"
    )


def _render_testimonial(record: Mapping[str, str], expand: Callable[[str], str], page_name: str) -> str:
    """The photo (its alt text is the name), the name, position and company, the quote."""
    name = html.escape(record.get("name", "").strip())
    photo = f'<img src="{html.escape(_file_url(record, "fID", expand))}" alt="{name}">' if _has(record, "fID") else ""
    return (
        f'\n\n    <div class="ccm-block-testimonial">{photo}<div class="ccm-block-testimonial-name">{name}</div>'
        f'<div class="ccm-block-testimonial-position">{html.escape(record.get("position", "").strip())}, '
        f"{html.escape(record.get('company', '').strip())}</div>"
        f'<div class="ccm-block-testimonial-paragraph">{html.escape(record.get("paragraph", "").strip())}</div>'
        "</div>\n"
    )


def _render_feature(record: Mapping[str, str], expand: Callable[[str], str], page_name: str) -> str:
    """The heading (a link when the feature has one), the paragraph; with an image, the image's title attribute
    repeats the heading's markup."""
    title = html.escape(record.get("title", ""))
    target = record.get("externalLink") or (
        expand("{CCM:CID_" + record["internalLinkCID"] + "}") if _has(record, "internalLinkCID") else ""
    )
    heading = f'<a href="{html.escape(target)}">{title}</a>' if target else title
    tag = record.get("titleFormat") or "h4"
    image = ""
    if _has(record, "fID"):
        image = f'<img src="{html.escape(_file_url(record, "fID", expand))}" title="{html.escape(heading)}">'
    return (
        f'\n\n    <div class="ccm-block-feature-item">{image}<{tag}>{heading}</{tag}>'
        f"{expand(record.get('paragraph', ''))}</div>\n"
    )


def _has(record: Mapping[str, str], column: str) -> bool:
    return record.get(column, "0") not in ("", "0")


def _file_url(record: Mapping[str, str], column: str, expand: Callable[[str], str]) -> str:
    return expand("{CCM:FID_" + record[column] + "}")


def _file_validate(args: Args) -> list[str | tuple[str, str]]:
    errors: list[str | tuple[str, str]] = []
    if str(args.get("fID") or "") in ("", "0"):
        errors.append("You must select a file.")
    if str(args.get("fileLinkText") or "").strip() == "":
        errors.append("You must enter the link text.")
    return errors


def _video_save(args: Args, where: Where) -> Args:
    out: Args = {k: max(0, int_value(args.get(k))) for k in ("webmfID", "oggfID", "mp4fID", "posterfID", "videoSize")}
    out["title"] = args.get("title", "")
    out["width"] = 0 if out["videoSize"] in (0, 1) else int_value(args.get("width"))
    return out


def _map_save(args: Args, where: Where) -> Args:
    zoom = int_value(args.get("zoom", -1))
    return {
        "title": str(args.get("title") or "").strip(),
        "location": str(args.get("location") or "").strip(),
        "zoom": zoom if 0 <= zoom <= 21 else 14,
        "latitude": args.get("latitude") or 0,
        "longitude": args.get("longitude") or 0,
        "width": args.get("width"),
        "height": args.get("height"),
        "scrollwheel": flag(args.get("scrollwheel")),
        "titleFormat": args.get("titleFormat", "h3"),
    }


def _map_validate(args: Args) -> list[str | tuple[str, str]]:
    """An API key is required on every edit; the API cannot read the saved one, and sending one replaces the site's
    (``app.api_keys.google.maps``)."""
    errors: list[str | tuple[str, str]] = []
    if not str(args.get("apiKey") or "").strip():
        errors.append("Please enter a valid API key.")
    if not args.get("location") or args.get("latitude", "") == "" or args.get("longitude", "") == "":
        errors.append("You must select a valid location.")
    return errors


def _youtube_validate(args: Args) -> list[str | tuple[str, str]]:
    return ["You must specify a video URL."] if str(args.get("videoURL") or "").strip() == "" else []


_YOUTUBE_FLAGS = (
    "startTimeEnabled",
    "noCookie",
    "autoplay",
    "loopEnd",
    "modestbranding",
    "lazyLoad",
    "rel",
    "showCaptions",
)

#: The button columns of the hero image and the feature link: its link (through :func:`_button_save`), its look.
_BUTTON_LINK = (
    ("buttonText", ""),
    ("buttonExternalLink", ""),
    ("buttonInternalLinkCID", "0"),
    ("buttonFileLinkID", "0"),
)
_BUTTON_LOOK = (("buttonColor", ""), ("buttonStyle", ""), ("buttonSize", ""))

TYPES = (
    BlockType(
        "image",
        (
            ("fID", ""),
            ("fOnstateID", "0"),
            ("cropImage", "0"),
            ("maxWidth", "0"),
            ("maxHeight", "0"),
            ("externalLink", ""),
            ("internalLinkCID", "0"),
            ("fileLinkID", "0"),
            ("openLinkInNewWindow", "0"),
            ("altText", ""),
            ("title", ""),
            ("lazyLoad", "0"),
            ("sizingOption", "thumbnails_default"),
        ),
        files=("fID", "fOnstateID", "fileLinkID"),
        pages=("internalLinkCID",),
        save=_image_save,
        validate=_image_validate,
        strict_file=(
            "btContentImage",
            "fID",
            (
                "fID",
                "fOnstateID",
                "cropImage",
                "maxWidth",
                "maxHeight",
                "externalLink",
                "internalLinkCID",
                "fileLinkID",
                "openLinkInNewWindow",
                "altText",
                "lazyLoad",
                "sizingOption",
            ),
        ),
    ),
    BlockType(
        "hero_image",
        (
            ("image", ""),
            ("title", ""),
            ("body", ""),
            *_BUTTON_LINK,
            ("height", "0"),
            *_BUTTON_LOOK,
            ("titleFormat", "h1"),
            ("icon", ""),
        ),
        files=("image",),
        save=_button_save,
        lenient_files=("image",),
        render=_render_hero,
    ),
    BlockType(
        "feature",
        (
            ("icon", ""),
            ("title", ""),
            ("paragraph", ""),
            ("externalLink", ""),
            ("internalLinkCID", ""),
            ("titleFormat", "h4"),
            ("fID", ""),
        ),
        files=("fID",),
        pages=("internalLinkCID",),
        save=_feature_save,
        render=_render_feature,
    ),
    BlockType(
        "feature_link",
        (
            ("title", ""),
            ("body", ""),
            *_BUTTON_LINK,
            *_BUTTON_LOOK,
            ("titleFormat", "h2"),
            ("icon", ""),
            ("fID", "0"),
        ),
        files=("fID",),
        save=_feature_link_save,
    ),
    BlockType(
        "testimonial",
        (
            ("fID", ""),
            ("name", ""),
            ("position", ""),
            ("company", ""),
            ("companyURL", ""),
            ("paragraph", ""),
            ("awardImageID", ""),
        ),
        files=("fID", "awardImageID"),
        save=lambda args, where: {
            **args,
            "fID": args.get("fID") if str(args.get("fID") or "") != "" else 0,
            "awardImageID": args.get("awardImageID") if str(args.get("awardImageID") or "") != "" else 0,
        },
        render=_render_testimonial,
    ),
    BlockType(
        "file",
        (("fID", ""), ("fileLinkText", ""), ("filePassword", ""), ("forceDownload", "0")),
        files=("fID",),
        validate=_file_validate,
    ),
    BlockType(
        "video",
        (
            ("webmfID", "0"),
            ("oggfID", "0"),
            ("posterfID", "0"),
            ("mp4fID", "0"),
            ("videoSize", "0"),
            ("width", "0"),
            ("title", ""),
        ),
        files=("webmfID", "oggfID", "posterfID", "mp4fID"),
        save=_video_save,
    ),
    BlockType(
        "youtube",
        (
            ("title", ""),
            ("videoURL", ""),
            ("vHeight", ""),
            ("vWidth", ""),
            ("sizing", "16:9"),
            ("startTimeEnabled", "0"),
            ("startTime", ""),
            ("noCookie", "0"),
            ("autoplay", "0"),
            ("color", ""),
            ("controls", "1"),
            ("iv_load_policy", "1"),
            ("loopEnd", "0"),
            ("modestbranding", "0"),
            ("lazyLoad", "0"),
            ("rel", "0"),
            ("showCaptions", "0"),
        ),
        validate=_youtube_validate,
        save=lambda args, where: {**args, **{k: flag(args.get(k)) for k in _YOUTUBE_FLAGS}},
    ),
    BlockType(
        "google_map",
        (
            ("title", ""),
            ("location", ""),
            ("latitude", "0"),
            ("longitude", "0"),
            ("zoom", "14"),
            ("width", "100%"),
            ("height", "400px"),
            ("scrollwheel", "0"),
            ("titleFormat", "h3"),
        ),
        save=_map_save,
        validate=_map_validate,
    ),
    BlockType(
        "image_slider",
        (
            ("navigationType", "0"),
            ("timeout", "4000"),
            ("speed", "500"),
            ("noAnimate", "0"),
            ("pause", "0"),
            ("maxWidth", "0"),
        ),
        entries=("fID", "title", "description", "linkURL"),
    ),
    BlockType("gallery", entries=("fID", "title", "description")),
)
