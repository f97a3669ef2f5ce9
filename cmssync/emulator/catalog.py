"""Fixed facts of a freshly installed Concrete CMS 9.3 site that the emulator serves as constants.

Scope names, page attribute keys, page types and templates, the upload
extension allow-list and the system-info strings. Block types and their columns are in
:mod:`cmssync.emulator.blocktypes`.
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


@dataclass(frozen=True)
class AttributeKey:
    """A page or file attribute key as installed: handle, attribute type handle, display order."""

    handle: str
    type: str
    order: int


def _by_handle(*keys: AttributeKey) -> dict[str, AttributeKey]:
    return {key.handle: key for key in keys}


PAGE_ATTRIBUTE_KEYS: dict[str, AttributeKey] = _by_handle(
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
    AttributeKey("blog_entry_topics", "topics", 14),
)

FILE_ATTRIBUTE_KEYS: dict[str, AttributeKey] = _by_handle(
    AttributeKey("width", "number", 1),
    AttributeKey("height", "number", 2),
    AttributeKey("duration", "number", 3),
)

USER_ATTRIBUTE_KEYS: dict[str, AttributeKey] = _by_handle(
    AttributeKey("profile_private_messages_enabled", "boolean", 1),
    AttributeKey("profile_private_messages_notification_enabled", "boolean", 2),
)

#: Page type handle -> display name (the name appears in a permission message).
#: ``core_stack`` is the type of stacks (stacks.jsonl: ``POST /pages`` of that type only lacks a template).
PAGE_TYPES: dict[str, str] = {
    "page": "Page",
    "blog": "Blog",
    "blog_entry": "Blog Entry",
    "resource": "Resource",
    "core_stack": "Stack",
}
#: Page type handle -> the numeric id block columns store (``ptID``), exported as ``{ccm:export:pagetype:…}``: the
#: ids ``page_list.ptID = n`` reads back as on the recorded site (block-types.jsonl ``setup.probe_page_type_ids.*``);
#: an id no page type has makes every read of the block an HTTP 500.
PAGE_TYPE_IDS: dict[str, int] = {
    "core_stack": 1,
    "core_stack_category": 2,
    "core_desktop": 3,
    "core_theme_documentation_category": 4,
    "core_theme_documentation": 5,
    "page": 6,
    "blog_entry": 7,
    "blog": 8,
    "resource": 9,
}
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
