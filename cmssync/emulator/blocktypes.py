"""Block types as a fresh Concrete CMS 9.3.1 site (``atomik_full``) has them: table columns and how they export.

The real server copies only the keys of a block's ``value`` that match a column of the block's table and returns every
column as a string; a type without a table returns ``[]``. ``BlockController::export`` — what every API read of a
block shows — turns id columns into portable references (checked against ``blocks.jsonl``):

* file columns: ``{ccm:export:file:<prefix without slashes>:<filename>}``, or ``""`` when the id is 0 or no file
  has it;
* page columns: ``{ccm:export:page:<path>}`` (``""`` for 0, a missing page, and the home page's empty path gives
  ``{ccm:export:page:}``);
* page-type columns: ``{ccm:export:pagetype:<handle>}``; file-folder columns: ``{ccm:export:filefolder:<path>}``;
  page-feed columns: ``""`` (a fresh site has no feeds).

Multi-record blocks (faq, accordion, image slider, gallery) keep their entries in a second table; the export shows
only the block's own record, so entries are invisible to the API (:data:`ENTRY_FIELDS`).
"""

from __future__ import annotations

#: Block type handle -> (column, default) pairs in table order. ``None`` means the type has no table (or none
#: that the API exports: its value reads back as ``[]``).
BLOCK_COLUMNS: dict[str, tuple[tuple[str, str], ...] | None] = {
    "content": (("content", ""),),
    "html": (("content", ""),),
    "page_title": (
        ("useCustomTitle", "0"),
        ("useFilterTitle", "0"),
        ("useFilterTopic", "0"),
        ("useFilterTag", "0"),
        ("useFilterDate", "0"),
        ("topicTextFormat", ""),
        ("tagTextFormat", ""),
        ("dateTextFormat", ""),
        ("filterDateFormat", ""),
        ("titleText", ""),
        ("formatting", "h1"),
    ),
    "file": (("fID", ""), ("fileLinkText", ""), ("filePassword", ""), ("forceDownload", "0")),
    "image": (
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
    "feature": (
        ("icon", ""),
        ("title", ""),
        ("paragraph", ""),
        ("externalLink", ""),
        ("internalLinkCID", ""),
        ("titleFormat", "h4"),
        ("fID", ""),
    ),
    "hero_image": (
        ("image", ""),
        ("title", ""),
        ("body", ""),
        ("buttonText", ""),
        ("buttonExternalLink", ""),
        ("buttonInternalLinkCID", "0"),
        ("buttonFileLinkID", "0"),
        ("height", "0"),
        ("buttonColor", ""),
        ("buttonStyle", ""),
        ("buttonSize", ""),
        ("titleFormat", "h1"),
        ("icon", ""),
    ),
    "youtube": (
        ("title", ""),
        ("videoURL", ""),
        ("vHeight", ""),
        ("vWidth", ""),
        ("sizing", "16:9"),
        ("startTimeEnabled", "0"),
        ("startTime", ""),
        ("autoplay", "0"),
        ("color", ""),
        ("controls", "1"),
        ("iv_load_policy", "1"),
        ("loopEnd", "0"),
        ("modestbranding", "0"),
        ("rel", "0"),
        ("showCaptions", "0"),
        ("lazyLoad", "0"),
    ),
    "testimonial": (
        ("fID", ""),
        ("name", ""),
        ("position", ""),
        ("company", ""),
        ("companyURL", ""),
        ("paragraph", ""),
        ("awardImageID", ""),
    ),
    "horizontal_rule": None,
    "core_container": None,
    "core_area_layout": None,
    "gallery": None,
    "autonav": (
        ("orderBy", "display_asc"),
        ("displayPages", "top"),
        ("displayPagesCID", "0"),
        ("displayPagesIncludeSelf", "0"),
        ("displaySubPages", "none"),
        ("displaySubPageLevels", "none"),
        ("displaySubPageLevelsNum", "0"),
        ("displayUnavailablePages", "0"),
    ),
    "breadcrumbs": (("includeCurrent", "1"), ("ignoreExcludeNav", "0"), ("ignorePermission", "0")),
    "page_list": (
        ("num", "0"),
        ("orderBy", "display_asc"),
        ("cParentID", "0"),
        ("cThis", "0"),
        ("cThisParent", "0"),
        ("useButtonForLink", "0"),
        ("buttonLinkText", ""),
        ("pageListTitle", ""),
        ("filterByRelated", "0"),
        ("filterByCustomTopic", "0"),
        ("filterDateOption", "all"),
        ("filterDateDays", "0"),
        ("filterDateStart", ""),
        ("filterDateEnd", ""),
        ("relatedTopicAttributeKeyHandle", ""),
        ("customTopicAttributeKeyHandle", ""),
        ("customTopicTreeNodeID", "0"),
        ("includeName", "1"),
        ("includeDescription", "1"),
        ("includeDate", "0"),
        ("includeAllDescendents", "0"),
        ("paginate", "0"),
        ("displayAliases", "0"),
        ("displaySystemPages", "0"),
        ("ignorePermissions", "0"),
        ("enableExternalFiltering", "0"),
        ("excludeCurrentPage", "0"),
        ("ptID", "0"),
        ("pfID", "0"),
        ("truncateSummaries", "0"),
        ("displayFeaturedOnly", "0"),
        ("noResultsMessage", ""),
        ("displayThumbnail", "0"),
        ("truncateChars", "0"),
        ("titleFormat", "h5"),
    ),
    "share_this_page": None,
    "social_links": None,
    "search": (
        ("title", ""),
        ("buttonText", ""),
        ("baseSearchPath", ""),
        ("search_all", "0"),
        ("allow_user_options", "0"),
        ("postTo_cID", "0"),
        ("resultsURL", ""),
    ),
    "accordion": (("initialState", "closed"), ("itemHeadingFormat", "h2"), ("alwaysOpen", ""), ("flush", "")),
    "faq": (("blockTitle", ""),),
    "board": None,
    "image_slider": (
        ("navigationType", "0"),
        ("timeout", "4000"),
        ("speed", "500"),
        ("noAnimate", "0"),
        ("pause", "0"),
        ("maxWidth", "0"),
    ),
    "feature_link": (
        ("title", ""),
        ("body", ""),
        ("buttonText", ""),
        ("buttonExternalLink", ""),
        ("buttonInternalLinkCID", "0"),
        ("buttonFileLinkID", "0"),
        ("buttonColor", ""),
        ("buttonStyle", ""),
        ("buttonSize", ""),
        ("titleFormat", "h2"),
        ("icon", ""),
        ("fID", "0"),
    ),
    "google_map": (
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
    "video": (("webmfID", "0"), ("oggfID", "0"), ("mp4fID", "0"), ("posterfID", "0"), ("width", "0")),
    "document_library": (
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
    "express_form": (
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
    "page_attribute_display": (
        ("attributeHandle", ""),
        ("attributeTitleText", ""),
        ("displayTag", "div"),
        ("dateFormat", ""),
        ("thumbnailHeight", "250"),
        ("thumbnailWidth", "250"),
        ("delimiter", "comma"),
    ),
    "form": None,
    "survey": None,
    "tags": None,
    "topic_list": None,
    "switch_language": None,
    "rss_displayer": None,
    "next_previous": (
        ("nextLabel", ""),
        ("previousLabel", ""),
        ("parentLabel", ""),
        ("loopSequence", "0"),
        ("orderBy", "display_asc"),
    ),
    "date_navigation": None,
    "calendar": None,
    "event_list": None,
    "top_navigation_bar": None,
}

#: Block columns that may hold a numeric file id (used to find the files a page refers to).
BLOCK_FILE_COLUMNS: frozenset[str] = frozenset({"fID", "awardImageID", "image", "fOnstateID", "fileLinkID"})

#: type -> columns exported as file references.
EXPORT_FILE_COLUMNS: dict[str, frozenset[str]] = {
    "image": frozenset({"fID", "fOnstateID", "fileLinkID"}),
    "hero_image": frozenset({"image"}),
    "testimonial": frozenset({"fID", "awardImageID"}),
    "feature": frozenset({"fID"}),
    "feature_link": frozenset({"fID"}),
    "file": frozenset({"fID"}),
}
#: type -> columns exported as page references.
EXPORT_PAGE_COLUMNS: dict[str, frozenset[str]] = {
    "image": frozenset({"internalLinkCID"}),
    "feature": frozenset({"internalLinkCID"}),
    "page_list": frozenset({"cParentID"}),
    "autonav": frozenset({"displayPagesCID"}),
    "search": frozenset({"postTo_cID"}),
    "express_form": frozenset({"redirectCID"}),
}
#: type -> columns exported as page-type references.
EXPORT_PAGETYPE_COLUMNS: dict[str, frozenset[str]] = {"page_list": frozenset({"ptID"})}
#: type -> columns exported as file-folder references.
EXPORT_FILEFOLDER_COLUMNS: dict[str, frozenset[str]] = {"document_library": frozenset({"folderID"})}
#: type -> columns exported as page-feed references (always ``""`` here).
EXPORT_FEED_COLUMNS: dict[str, frozenset[str]] = {"page_list": frozenset({"pfID"})}

#: Integer file columns whose controller hands the value to the database as it came: a value that is not a whole
#: number makes the INSERT/UPDATE fail (HTTP 500). Table name and column order of the statement, for the message.
STRICT_FILE_COLUMNS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "image": (
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
    )
}
#: Integer file columns the controller casts itself: anything but a whole number is stored as 0.
LENIENT_FILE_COLUMNS: dict[str, frozenset[str]] = {"hero_image": frozenset({"image"})}

#: Block types whose ``add`` needs keys the API cannot send (the layout / container editors post them): the key read.
LAYOUT_REQUIRED_KEY: dict[str, str] = {"core_area_layout": "gridType", "core_container": "containerID"}

#: Multi-record types: the per-entry fields, sent as parallel arrays (``{"title": ["A", "B"], …}``).
ENTRY_FIELDS: dict[str, tuple[str, ...]] = {
    "faq": ("sortOrder", "title", "linkTitle", "description"),
    "accordion": ("title", "description"),
    "image_slider": ("fID", "title", "description", "linkURL"),
    "gallery": ("fID", "title", "description"),
}

#: The database the recorded site's SQL errors name.
DATABASE_NAME = "concrete_rec"
