"""Fixed facts of a freshly installed Concrete CMS 9.3 site that the emulator serves as constants.

Scope names, the block types with their database columns, page attribute keys, page types and templates, the upload
extension allow-list and the system-info strings. Block columns matter because the real server copies only the keys
of a block's ``value`` that match a column of the block's table and returns every column as a string; a type without
a table returns ``[]``.
"""

from __future__ import annotations

from dataclasses import dataclass

SCOPES: tuple[str, ...] = (
    "openid",
    "account:read",
    "system:info:read",
    "sites:read",
    "calendars:read",
    "calendar_events:read",
    "files:read",
    "files:add",
    "files:update",
    "files:delete",
    "pages:read",
    "pages:add",
    "pages:update",
    "pages:delete",
    "pages:areas:add_block",
    "pages:areas:delete_block",
    "pages:areas:update_block",
    "pages:versions:read",
    "pages:versions:update",
    "pages:versions:delete",
    "blocks:read",
    "blocks:update",
    "blocks:delete",
    "users:read",
    "users:add",
    "users:update",
    "users:delete",
    "groups:read",
    "groups:add",
)

SUPER_ADMIN_ID = 1

#: Block type handle -> (column, default) pairs in table order. ``None`` means the type has no table.
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
        ("maxWidth", "0"),
        ("maxHeight", "0"),
        ("externalLink", ""),
        ("internalLinkCID", "0"),
        ("fileLinkID", "0"),
        ("altText", ""),
        ("title", ""),
        ("cropImage", "0"),
        ("sizingOption", "thumbnails_default"),
        ("openLinkInNewWindow", "0"),
        ("lazyLoad", "0"),
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
    "breadcrumbs": (("includeCurrent", "1"), ("ignoreExcludeNav", "0")),
    "page_list": (("num", "0"), ("orderBy", "display_asc"), ("cParentID", ""), ("cThis", "0")),
    "share_this_page": None,
    "social_links": None,
    "search": (("title", ""), ("buttonText", ""), ("baseSearchPath", ""), ("resultsURL", "")),
    "accordion": None,
    "faq": None,
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
    ),
    "google_map": (("title", ""), ("location", ""), ("latitude", "0"), ("longitude", "0"), ("zoom", "14")),
    "video": (("webmfID", "0"), ("oggfID", "0"), ("mp4fID", "0"), ("posterfID", "0"), ("width", "0")),
    "document_library": None,
    "express_form": None,
    "form": None,
    "survey": None,
    "tags": None,
    "topic_list": None,
    "switch_language": None,
    "rss_displayer": None,
    "next_previous": None,
    "date_navigation": None,
    "calendar": None,
    "event_list": None,
    "top_navigation_bar": None,
}

#: Block columns that hold a numeric file id (used to find the files a page refers to).
BLOCK_FILE_COLUMNS: frozenset[str] = frozenset({"fID", "awardImageID", "image"})


@dataclass(frozen=True)
class AttributeKey:
    """A page or file attribute key as installed: handle, attribute type handle, display order."""

    handle: str
    type: str
    order: int


PAGE_ATTRIBUTE_KEYS: dict[str, AttributeKey] = {
    key.handle: key
    for key in (
        AttributeKey("meta_title", "text", 1),
        AttributeKey("meta_description", "textarea", 2),
        AttributeKey("meta_keywords", "textarea", 3),
        AttributeKey("desktop_priority", "number", 4),
        AttributeKey("header_extra_content", "textarea", 5),
        AttributeKey("exclude_nav", "boolean", 6),
        AttributeKey("exclude_page_list", "boolean", 7),
        AttributeKey("exclude_search_index", "boolean", 8),
        AttributeKey("exclude_sitemapxml", "boolean", 9),
        AttributeKey("exclude_subpages_from_nav", "boolean", 10),
        AttributeKey("is_featured", "boolean", 11),
        AttributeKey("tags", "select", 12),
        AttributeKey("thumbnail", "image_file", 13),
    )
}

FILE_ATTRIBUTE_KEYS: dict[str, AttributeKey] = {
    key.handle: key
    for key in (
        AttributeKey("width", "number", 1),
        AttributeKey("height", "number", 2),
        AttributeKey("duration", "number", 3),
    )
}

USER_ATTRIBUTE_KEYS: dict[str, AttributeKey] = {
    key.handle: key
    for key in (
        AttributeKey("profile_private_messages_enabled", "boolean", 1),
        AttributeKey("profile_private_messages_notification_enabled", "boolean", 2),
    )
}

#: Page type handle -> display name (the name appears in a permission message).
PAGE_TYPES: dict[str, str] = {"page": "Page", "blog": "Blog", "blog_entry": "Blog Entry", "resource": "Resource"}
PAGE_TEMPLATES: frozenset[str] = frozenset({"full", "left_sidebar", "right_sidebar", "resource_detail"})

#: ``concrete.upload.extensions`` of a default install.
UPLOAD_EXTENSIONS: frozenset[str] = frozenset(
    [
        "flv",
        "jpg",
        "gif",
        "jpeg",
        "ico",
        "docx",
        "xla",
        "png",
        "psd",
        "swf",
        "doc",
        "txt",
        "xls",
        "xlsx",
        "csv",
        "pdf",
        "tiff",
        "rtf",
        "m4a",
        "mov",
        "wmv",
        "mpeg",
        "mpg",
        "wav",
        "3gp",
        "avi",
        "m4v",
        "mp4",
        "mp3",
        "qt",
        "ppt",
        "pptx",
        "kml",
        "xml",
        "svg",
        "webm",
        "webp",
        "ogg",
        "ogv",
    ]
)

FILE_TYPE_NAMES: dict[str, str] = {
    "jpg": "JPEG",
    "jpeg": "JPEG",
    "png": "PNG",
    "gif": "GIF",
    "webp": "WEBP",
    "svg": "SVG",
    "ico": "ICO",
    "tiff": "TIFF",
    "pdf": "PDF",
    "txt": "Plain Text",
    "csv": "CSV",
    "xml": "XML",
    "rtf": "Rich Text",
    "doc": "Microsoft Word",
    "docx": "Microsoft Word",
    "xls": "Microsoft Excel",
    "xlsx": "Microsoft Excel",
    "ppt": "Microsoft Powerpoint",
    "pptx": "Microsoft Powerpoint",
    "mp3": "MP3",
    "mp4": "MP4",
    "webm": "WEBM",
    "ogg": "OGG",
}

MIME_TYPES: dict[str, str] = {
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "png": "image/png",
    "gif": "image/gif",
    "webp": "image/webp",
    "svg": "image/svg+xml",
    "pdf": "application/pdf",
    "txt": "text/plain",
    "csv": "text/csv",
    "xml": "application/xml",
    "mp3": "audio/mpeg",
    "mp4": "video/mp4",
}

#: ``upload_max_filesize`` and ``post_max_size`` of the recorded site.
UPLOAD_MAX_BYTES = 20 * 1024 * 1024
POST_MAX_BYTES = 24 * 1024 * 1024

SYSTEM_INFO: dict[str, str] = {
    "version": "9.3.1",
    "code_version": "9.3.1",
    "db_version": "20240515173142",
    "packages": "",
    "overrides": "",
    "cache": "Block Cache - Off\nOverrides Cache - Off\nFull Page Caching - Off\n"
    "Full Page Cache Lifetime - Every 6 hours (default setting).",
    "server": "cmssync emulator (uvicorn)",
    "server_api": "cli-server",
    "php_version": "8.2.36",
    "php_extensions": "bcmath, Core, ctype, curl, date, dom, fileinfo, filter, gd, hash, iconv, intl, json, "
    "mbstring, openssl, pcre, PDO, pdo_mysql, session, SimpleXML, SPL, standard, xml, zip, zlib",
    "php_settings": "max_execution_time - 30\nmax_file_uploads - 20\nmemory_limit - 512M\npost_max_size - 24M\n"
    "upload_max_filesize - 20M",
}
