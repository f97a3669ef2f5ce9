"""The block-type cases ``record_blocks.py`` records: how a client turns a read (export form) into a write.

Each case names a block type, where its value comes from (a sample block on the ``atomik_full`` site, or a value
written by hand for types the sample site does not use), and the text field an editor would change. ``write_form``
is the translation a client must do for a round trip, learned from the block controllers' ``save()``: id columns
from export form to numbers (``Ids``), plus the keys a controller reads instead of its columns (link pickers,
``linkType``, ``topicFilter``, search modes, document library arrays).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_PAGE = re.compile(r"\{ccm:export:page:(.*)\}")
_FILE = re.compile(r"\{ccm:export:file:([^:{}]*):(.*)\}")
_PAGETYPE = re.compile(r"\{ccm:export:pagetype:(.*)\}")
_FOLDER = re.compile(r"\{ccm:export:filefolder:(.*)\}")


@dataclass
class Ids:
    """What the recorder learned about numeric ids: pages by path, files/page types/folders by probing."""

    pages: dict[str, int] = field(default_factory=dict)
    files: dict[str, int] = field(default_factory=dict)
    page_types: dict[str, int] = field(default_factory=dict)
    folders: dict[str, int] = field(default_factory=dict)

    def stored(self, value: str) -> str:
        """An export-form column value as the number the controller stores (unchanged when it is no export)."""
        for pattern, table, key in (
            (_PAGE, self.pages, lambda m: m.group(1) or "/"),
            (_FILE, self.files, lambda m: f"{m.group(1)}:{m.group(2)}"),
            (_PAGETYPE, self.page_types, lambda m: m.group(1)),
            (_FOLDER, self.folders, lambda m: m.group(1)),
        ):
            found = pattern.fullmatch(value)
            if found is not None:
                return str(table[key(found)])
        return value


@dataclass(frozen=True)
class Case:
    block_type: str
    edit: str | None
    """The text column an editor changes (None: the type has none; a flag is flipped instead)."""
    value: Mapping[str, Any] | None = None
    """A hand-written stored value (types absent from the sample site); None: converted from a sample block."""
    flip: str | None = None
    """With no text column: a 0/1 column the update flips."""
    variant: str = ""
    """Names a second case of a type (``types.<type>.<variant>.*``)."""

    @property
    def name(self) -> str:
        return f"{self.block_type}.{self.variant}" if self.variant else self.block_type


CASES: tuple[Case, ...] = (
    Case("content", "content"),
    Case("page_title", "titleText"),
    Case("hero_image", "title"),
    Case("feature", "title"),
    Case("feature_link", "title"),
    Case("testimonial", "name"),
    Case("image", "altText"),
    Case("page_attribute_display", "attributeTitleText"),
    Case("breadcrumbs", None, flip="includeCurrent"),
    Case("share_this_page", None),
    Case("next_previous", "nextLabel"),
    Case("autonav", None, flip="displayUnavailablePages"),
    Case("search", "buttonText"),
    Case("google_map", "title"),
    Case("page_list", "pageListTitle"),
    Case("document_library", "tableName"),
    Case("express_form", "thankyouMsg"),
    Case("html", "content", {"content": '<div class="rec-html">Hand-written <b>HTML</b></div>'}),
    Case("horizontal_rule", None, {}),
    Case(
        "file",
        "fileLinkText",
        {"fID": "@file:dummy.pdf", "fileLinkText": "Get the brochure", "filePassword": "", "forceDownload": "0"},
    ),
    Case(
        "youtube",
        "title",
        {
            "title": "Launch video",
            "videoURL": "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
            "sizing": "16:9",
            "vHeight": "",
            "vWidth": "",
            "controls": "1",
            "lazyLoad": "0",
        },
    ),
    Case("video", "title", {"title": "Product tour", "mp4fID": "@file:dummy.pdf", "videoSize": "0", "width": "0"}),
    Case("social_links", None, {"slID": []}),
    Case(
        "date_navigation",
        "title",
        {
            "title": "Archives",
            "filterByParent": "1",
            "cParentID": "@page:/about/blog",
            "redirectToResults": "0",
            "cTargetID": "0",
            "ptID": "@pagetype:blog_entry",
            "titleFormat": "h5",
        },
    ),
    Case(
        "rss_displayer",
        "title",
        {
            "title": "News feed",
            "url": "http://127.0.0.1:1/feed.xml",
            "itemsToDisplay": "3",
            "showSummary": "1",
            "launchInNewWindow": "0",
            "standardDateFormat": "F j, Y",
            "titleFormat": "h5",
        },
    ),
    Case("tags", "title", {"title": "Tags", "displayMode": "page", "cloudCount": "10", "titleFormat": "h5"}),
    Case("switch_language", "label", {"label": "Choose a language"}),
    Case(
        "top_navigation_bar",
        "brandingText",
        {
            "brandingText": "Lab Brand",
            "includeBrandText": "1",
            "includeBrandLogo": "0",
            "includeNavigation": "1",
            "includeSearchInput": "0",
        },
    ),
    Case(
        "survey",
        "question",
        {"question": "Which colour?", "requiresRegistration": "0", "showResults": "1", "customMessage": ""},
    ),
    # links and second files: the keys a controller reads instead of its link columns
    Case(
        "feature",
        "title",
        {
            "icon": "fas fa-link",
            "title": "Linked feature",
            "paragraph": "<p>Body</p>",
            "internalLinkCID": "@page:/about",
            "externalLink": "",
            "titleFormat": "h4",
            "fID": "@file:people-01.jpg",
        },
        variant="linked",
    ),
    Case(
        "feature",
        "title",
        {
            "icon": "",
            "title": "External feature",
            "paragraph": "",
            "internalLinkCID": "0",
            "externalLink": "https://example.com/more",
            "titleFormat": "h5",
            "fID": "",
        },
        variant="external",
    ),
    Case(
        "feature_link",
        "title",
        {
            "title": "Linked card",
            "body": "<p>Card</p>",
            "buttonText": "Read",
            "buttonInternalLinkCID": "@page:/about",
            "buttonFileLinkID": "0",
            "buttonExternalLink": "",
            "buttonColor": "primary",
            "buttonStyle": "",
            "buttonSize": "",
            "titleFormat": "h2",
            "icon": "",
            "fID": "@file:people-01.jpg",
        },
        variant="linked",
    ),
    Case(
        "hero_image",
        "title",
        {
            "image": "@file:hero-01.jpg",
            "title": "Hero",
            "body": "<p>b</p>",
            "buttonText": "Go",
            "buttonExternalLink": "https://example.com/go",
            "buttonInternalLinkCID": "0",
            "buttonFileLinkID": "0",
            "height": "60",
            "buttonColor": "primary",
            "buttonStyle": "",
            "buttonSize": "",
            "titleFormat": "h2",
            "icon": "",
        },
        variant="linked",
    ),
    Case(
        "image",
        "altText",
        {
            "fID": "@file:people-01.jpg",
            "internalLinkCID": "@page:/about",
            "altText": "Team",
            "title": "",
            "sizingOption": "thumbnails_default",
            "openLinkInNewWindow": "1",
        },
        variant="linked",
    ),
    Case(
        "image",
        "altText",
        {"fID": "@file:people-01.jpg", "fileLinkID": "@file:dummy.pdf", "altText": "Doc", "sizingOption": "full_size"},
        variant="file_link",
    ),
    Case(
        "testimonial",
        "name",
        {
            "fID": "@file:team-02.jpg",
            "name": "Pat",
            "position": "CTO",
            "company": "Acme",
            "companyURL": "https://example.com",
            "paragraph": "Great.",
            "awardImageID": "@file:people-01.jpg",
        },
        variant="award",
    ),
    Case(
        "page_list",
        "pageListTitle",
        {
            "num": "4",
            "orderBy": "chrono_desc",
            "cParentID": "@page:/about/blog",
            "ptID": "@pagetype:blog_entry",
            "includeName": "1",
            "includeDate": "1",
            "pageListTitle": "Posts",
            "filterByRelated": "0",
            "filterByCustomTopic": "0",
            "titleFormat": "h5",
        },
        variant="parent",
    ),
    Case(
        "search",
        "title",
        {
            "title": "Find",
            "buttonText": "Go",
            "baseSearchPath": "/about",
            "postTo_cID": "@page:/search",
            "resultsURL": "",
            "search_all": "0",
            "allow_user_options": "1",
        },
        variant="paths",
    ),
    Case(
        "autonav",
        None,
        {
            "orderBy": "display_asc",
            "displayPages": "custom",
            "displayPagesCID": "@page:/about",
            "displayPagesIncludeSelf": "1",
            "displaySubPages": "all",
            "displaySubPageLevels": "custom",
            "displaySubPageLevelsNum": "2",
            "displayUnavailablePages": "0",
        },
        flip="displayPagesIncludeSelf",
        variant="custom",
    ),
    Case(
        "document_library",
        "tableName",
        {
            "folderID": "@folder:/Documents",
            "tableName": "Docs",
            "viewProperties": '["title"]',
            "setIds": "[]",
            "hideFolders": "1",
            "orderBy": "title",
            "displayLimit": "5",
            "enableSearch": "0",
            "heightMode": "auto",
            "downloadFileMethod": "force",
        },
        variant="folder",
    ),
)


def hand_value(case: Case, ids: Ids) -> dict[str, Any]:
    """A hand-written case value with its ``@file:NAME`` / ``@page:/path`` / ``@pagetype:handle`` ids filled in."""
    out: dict[str, Any] = {}
    for key, value in (case.value or {}).items():
        if isinstance(value, str) and value.startswith("@file:"):
            value = str(next(n for name, n in ids.files.items() if name.endswith(":" + value[6:])))
        elif isinstance(value, str) and value.startswith("@page:"):
            value = str(ids.pages[value[6:]])
        elif isinstance(value, str) and value.startswith("@pagetype:"):
            value = str(ids.page_types[value[10:]])
        elif isinstance(value, str) and value.startswith("@folder:"):
            value = str(ids.folders[value[8:]])
        out[key] = value
    return out


def write_form(block_type: str, read: Mapping[str, Any], ids: Ids) -> dict[str, Any]:
    """The value a client sends to give a block the record ``read`` (export form) shows."""
    value: dict[str, Any] = {k: ids.stored(v) if isinstance(v, str) else v for k, v in read.items()}
    if block_type == "image":
        if value.get("cropImage") == "0":
            del value["cropImage"]  # the controller tests isset(): "0" fails validation without max sizes
        for key in [k for k in value if k.startswith("imageLink_")]:
            del value[key]
        _picker(value, page="internalLinkCID", file="fileLinkID", url="externalLink")
    elif block_type in ("feature_link", "hero_image"):
        _picker(value, page="buttonInternalLinkCID", file="buttonFileLinkID", url="buttonExternalLink")
    elif block_type == "feature":
        value["linkType"] = 1 if _id(value.get("internalLinkCID")) else 2 if value.get("externalLink") else 0
    elif block_type == "page_list":
        value["topicFilter"] = (
            "related"
            if value.get("filterByRelated") == "1"
            else "custom"
            if value.get("filterByCustomTopic") == "1"
            else ""
        )
        # "" (not 0) when there is no parent: save() compares the parent with === against the page's own id and
        # its parent's, and an int 0 equals the home page's parent id (cThisParent would turn on).
        value["cParentID"] = _id(value.get("cParentID")) or ""
    elif block_type == "search":
        path = value.get("baseSearchPath") or ""
        if value.get("search_all") == "1":
            value["baseSearchPath"] = "ALL"
        elif path:
            value["baseSearchPath"], value["searchUnderCID"] = "OTHER", ids.pages[path]
        if _id(value.get("postTo_cID")):
            value["resultsPageKind"] = "CID"
        elif value.get("resultsURL"):
            value["resultsPageKind"] = "URL"
        value["allowUserOptions"] = "ALLOW" if value.get("allow_user_options") == "1" else ""
    elif block_type == "express_form":
        value["redirectCID"] = _id(value.get("redirectCID"))  # "" is an SQL error in the integer column
    elif block_type == "document_library":
        for key in ("viewProperties", "searchProperties", "expandableProperties"):
            value[key] = json.loads(value.get(key) or "[]")
        value["fsID"] = json.loads(value.pop("setIds", "[]") or "[]")
        value["showFolders"] = value.pop("hideFolders", "0") != "1"
    return value


def _picker(value: dict[str, Any], *, page: str, file: str, url: str) -> None:
    """The link chooser (``DestinationPicker``) a controller decodes into its three link columns."""
    if _id(value.get(page)):
        value["imageLink__which"], value["imageLink_page"] = "page", _id(value[page])
    elif _id(value.get(file)):
        value["imageLink__which"], value["imageLink_file"] = "file", _id(value[file])
    elif value.get(url):
        value["imageLink__which"], value["imageLink_external_url"] = "external_url", value[url]
    else:
        value["imageLink__which"] = "none"


def _id(value: Any) -> int:
    text = str(value or "")
    return int(text) if text.isdigit() else 0
