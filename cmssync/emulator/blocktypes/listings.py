"""Blocks that list or collect: document library, forms, RSS, social links and sharing, calendars, boards, and the
layouts and containers the API cannot create (see :mod:`.model`)."""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Mapping

from cmssync.emulator.blocktypes.model import Args, BlockType, Where, flag, int_value


def _document_library_save(args: Args, where: Where) -> Args:
    """Property lists and file sets arrive as arrays and are stored as JSON; ``showFolders`` is stored inverted
    (``hideFolders``); the rest is normalised the controller's way."""

    def listed(key: str) -> str:
        value = args.get(key)
        return json.dumps(value if isinstance(value, list) else [], separators=(",", ":"))

    striped = flag(args.get("tableStriped")) == "1"
    show = str(args.get("showFolders", "")).lower() in ("1", "true", "on", "yes")
    return {
        "folderID": args.get("folderID"),
        "viewProperties": listed("viewProperties"),
        "searchProperties": listed("searchProperties"),
        "expandableProperties": listed("expandableProperties"),
        "setIds": listed("fsID"),
        "setMode": "all" if args.get("setMode") == "all" else "any",
        "onlyCurrentUser": flag(args.get("onlyCurrentUser")),
        "allowInPageFileManagement": flag(args.get("allowInPageFileManagement")),
        "allowFileUploading": flag(args.get("allowFileUploading")),
        "tags": args.get("tags"),
        "orderBy": args.get("orderBy"),
        "displayLimit": args.get("displayLimit"),
        "displayOrderDesc": flag(args.get("displayOrderDesc")),
        "maxThumbWidth": int_value(args.get("maxThumbWidth")),
        "maxThumbHeight": int_value(args.get("maxThumbHeight")),
        "enableSearch": flag(args.get("enableSearch")),
        "heightMode": "fixed" if args.get("heightMode") == "fixed" else "auto",
        "downloadFileMethod": "force" if args.get("downloadFileMethod") == "force" else "browser",
        "fixedHeightSize": int_value(args.get("fixedHeightSize")),
        "headerBackgroundColor": args.get("headerBackgroundColor"),
        "addFilesToSetID": 0,
        "headerBackgroundColorActiveSort": args.get("headerBackgroundColorActiveSort"),
        "headerTextColor": args.get("headerTextColor"),
        "tableName": args.get("tableName", ""),
        "tableDescription": args.get("tableDescription", ""),
        "tableStriped": "1" if striped else "0",
        "rowBackgroundColorAlternate": args.get("rowBackgroundColorAlternate") if striped else "",
        "hideFolders": "0" if show else "1",
    }


def _rss_save(args: Args, where: Where) -> Args:
    items = int_value(args.get("itemsToDisplay"))
    date = args.get("standardDateFormat", "")
    return {
        "url": args.get("url", ""),
        "itemsToDisplay": items if items > 0 else 5,
        "showSummary": flag(args.get("showSummary")),
        "launchInNewWindow": flag(args.get("launchInNewWindow")),
        "title": args.get("title", ""),
        "titleFormat": args.get("titleFormat", ""),
        "dateFormat": args.get("customDateFormat", "") if date == ":custom:" else date,
    }


def _render_express_form(record: Mapping[str, str], expand: Callable[[str], str], page_name: str) -> str:
    """The form and its submit button (the thank-you message shows only after a submission)."""
    label = html.escape(record.get("submitLabel", ""))
    return f'\n\n    <div class="ccm-block-express-form"><form><button type="submit">{label}</button></form></div>\n'


def _social_links_validate(args: Args) -> list[str | tuple[str, str]]:
    return [] if args.get("slID") else ["You must choose at least one link."]


TYPES = (
    BlockType(
        "document_library",
        (
            ("setIds", "[]"),
            ("folderID", "0"),
            ("setMode", "any"),
            ("onlyCurrentUser", "0"),
            ("tags", ""),
            ("viewProperties", "[]"),
            ("expandableProperties", "[]"),
            ("searchProperties", "[]"),
            ("orderBy", "title"),
            ("displayLimit", "20"),
            ("displayOrderDesc", "0"),
            ("addFilesToSetID", "0"),
            ("maxThumbWidth", "0"),
            ("maxThumbHeight", "0"),
            ("enableSearch", "0"),
            ("heightMode", "auto"),
            ("downloadFileMethod", "browser"),
            ("fixedHeightSize", "0"),
            ("headerBackgroundColor", ""),
            ("headerBackgroundColorActiveSort", ""),
            ("headerTextColor", ""),
            ("allowFileUploading", "0"),
            ("allowInPageFileManagement", "0"),
            ("tableName", ""),
            ("tableDescription", ""),
            ("tableStriped", "0"),
            ("rowBackgroundColorAlternate", ""),
            ("hideFolders", "0"),
        ),
        folders=("folderID",),
        save=_document_library_save,
    ),
    BlockType(
        "express_form",
        (
            ("exFormID", ""),
            ("submitLabel", "Submit"),
            ("thankyouMsg", ""),
            ("notifyMeOnSubmission", "0"),
            ("recipientEmail", ""),
            ("displayCaptcha", "0"),
            ("storeFormSubmission", "1"),
            ("redirectCID", "0"),
            ("replyToEmailControlID", ""),
            ("addFilesToSet", "0"),
            ("addFilesToFolder", "0"),
        ),
        pages=("redirectCID",),
        # ``isset($data['storeFormSubmission']) ?: 0``: stored 1 whenever the key is sent, whatever its value
        save=lambda args, where: {**args, "storeFormSubmission": 1 if "storeFormSubmission" in args else 0},
        render=_render_express_form,
    ),
    BlockType(
        "rss_displayer",
        (
            ("title", ""),
            ("url", ""),
            ("dateFormat", ""),
            ("itemsToDisplay", "5"),
            ("showSummary", "0"),
            ("launchInNewWindow", "0"),
            ("titleFormat", ""),
        ),
        save=_rss_save,
    ),
    BlockType("social_links", validate=_social_links_validate),
    BlockType("share_this_page", required="service"),
    BlockType("form"),
    BlockType("calendar"),
    BlockType("event_list"),
    BlockType("board"),
    BlockType("core_container", required="containerID"),
    BlockType("core_area_layout", required="gridType"),
    # stack-displays.jsonl: added with {"stID": <the stack's page id>} (200, read back as []); without stID or with
    # a stID that is not a number the insert fails (HTTP 500; the real message is the SQL error for both); an id
    # that is no stack is stored and renders nothing.
    BlockType(
        "core_stack_display",
        columns=(("stID", "0"),),
        required="stID",
        strict_file=("btCoreStackDisplay", "stID", ("stID",)),
        exported=False,
    ),
    BlockType("core_page_type_composer_control_output"),  # on page-type defaults pages only (type-defaults.jsonl)
)
