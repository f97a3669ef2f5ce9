"""Response models that accept both the real server's shapes and the documented ones.

The real server wraps every object and every include in ``{"data": …}`` (Fractal's DataArraySerializer), returns
``is_approved`` as 0/1, version dates as ``Y-m-d H:i:s`` without a zone, ids as numbers and block values as strings;
the documented dialect returns bare objects, string ids and flags, and calendar dates. Every model here takes either
and gives one normalised value: ids as ``int`` (file ids as ``str``: UUIDs on 9.x), flags as ``bool``, dates as
timezone-aware ``datetime`` (a date without a zone is taken as UTC, the zone of every site recorded so far).

Unknown fields are kept (``extra="allow"``) so nothing the server says is lost, and missing fields are ``None``.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator


def unwrap(value: Any) -> Any:
    """``{"data": X}`` → X (also with a ``meta`` beside it); anything else unchanged."""
    if isinstance(value, dict) and "data" in value and set(value) <= {"data", "meta"}:
        return value["data"]
    return value


def _as_list(value: Any) -> Any:
    value = unwrap(value)
    if value is None:
        return []
    if isinstance(value, dict):
        # A PHP empty array in a place that holds a list can arrive as {} or, keyed, as an object of items.
        return list(value.values())
    return value


def to_bool(value: Any) -> Any:
    """0/1, "0"/"1", "true"/"false", "" and None as booleans (None stays None)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in {"1", "true", "yes", "on"}:
            return True
        if text in {"0", "false", "no", "off", ""}:
            return False
    return value


def to_datetime(value: Any) -> Any:
    """ATOM with offset, ``Y-m-d H:i:s`` (UTC assumed), ``YYYY-MM-DD``, unix seconds; empty or zero dates → None."""
    if value is None or isinstance(value, dt.datetime):
        return value if not isinstance(value, dt.datetime) or value.tzinfo else value.replace(tzinfo=dt.UTC)
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return dt.datetime.fromtimestamp(value, tz=dt.UTC) if value > 0 else None
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
    if isinstance(value, str):
        text = value.strip()
        if not text or text.startswith("0000-00-00"):
            return None
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        try:
            parsed = dt.datetime.fromisoformat(text)
        except ValueError:
            return value
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    return value


def to_optional_int(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip().replace(",", "")
        if not text:
            return None
        try:
            return int(float(text)) if "." in text else int(text)
        except ValueError:
            return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool):
        return int(value)
    return value


def to_optional_str(value: Any) -> Any:
    """Strings stay, numbers become strings, ``false`` (PHP's "no value") becomes None."""
    if value is False or value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


Flag = Annotated[bool | None, BeforeValidator(to_bool)]
Timestamp = Annotated[dt.datetime | None, BeforeValidator(to_datetime)]
Int = Annotated[int | None, BeforeValidator(to_optional_int)]
Text = Annotated[str | None, BeforeValidator(to_optional_str)]


class ApiModel(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)


class Content(ApiModel):
    content: Text = None
    raw: Text = None


class CustomAttribute(ApiModel):
    """An attribute value. ``value`` as the server gives it, with a ``data`` envelope removed."""

    id: Int = None
    type: Text = None
    handle: Text = None
    value: Any = None

    @model_validator(mode="before")
    @classmethod
    def _key_is_handle(cls, data: Any) -> Any:
        # The documented dialect calls the handle ``key``.
        if isinstance(data, dict) and data.get("handle") is None and isinstance(data.get("key"), str):
            return {**data, "handle": data["key"]}
        return data

    @field_validator("value", mode="before")
    @classmethod
    def _unwrap_value(cls, value: Any) -> Any:
        return unwrap(value)


Attributes = Annotated[list[CustomAttribute], BeforeValidator(_as_list)]


class PageVersion(ApiModel):
    id: Int = None
    """``None`` only when the page has no live version (after denying the live one)."""
    is_approved: Annotated[bool, BeforeValidator(lambda v: bool(to_bool(v)) if v is not None else False)] = False
    date_created: Timestamp = None
    date_approved: Timestamp = None
    publish_end_date: Timestamp = None


class Group(ApiModel):
    id: int
    name: Text = None


class FileSize(ApiModel):
    description: Text = None
    exact: Int = None
    """Bytes; a number only in the upload answer on a real server, a string elsewhere: always ``int`` here."""


def _size(value: Any) -> Any:
    value = unwrap(value)
    if value is None or isinstance(value, dict):
        return value
    if isinstance(value, int | str):
        return {"exact": value}
    return value


class File(ApiModel):
    id: Annotated[str, BeforeValidator(lambda v: str(v) if isinstance(v, int) and not isinstance(v, bool) else v)]
    """The file's UUID on 9.x (numeric ids do not resolve for 9.x files); lower case."""
    title: Text = None
    description: Text = None
    tags: Text = None
    """Raw stored form: newline separated with leading and trailing newlines (see :attr:`tag_list`)."""
    url: Text = None
    tracked_url: Text = None
    file_type: Text = None
    extension: Text = None
    folder: Int = None
    date_added: Timestamp = None
    size: Annotated[FileSize | None, BeforeValidator(_size)] = None
    custom_attributes: Attributes = Field(default_factory=list)

    @property
    def tag_list(self) -> list[str]:
        raw = self.tags or ""
        return [t.strip() for t in raw.replace(",", "\n").splitlines() if t.strip()]


def _block_value(value: Any) -> Any:
    value = unwrap(value)
    if value is None or value == []:
        return {}
    return value


class Page(ApiModel):
    id: int
    path: Text = None
    """``None`` or "" for the home page."""
    name: Text = None
    """``None`` when the page has no live version."""
    date_added: Timestamp = None
    date_last_updated: Timestamp = None
    type: Text = None
    template: Text = None
    """``None`` when the page has no live version (the real server then says ``false``)."""
    locale: Text = None
    description: Text = None
    external_link_url: Text = None
    version: Annotated[PageVersion | None, BeforeValidator(unwrap)] = None
    custom_attributes: Attributes = Field(default_factory=list)
    areas: Annotated[list[Area] | None, BeforeValidator(lambda v: None if v is None else _as_list(v))] = None
    """Only with ``includes=areas``; areas that hold blocks in the version read, by name."""
    files: Annotated[list[File] | None, BeforeValidator(lambda v: None if v is None else _as_list(v))] = None
    content: Annotated[Content | None, BeforeValidator(unwrap)] = None

    @property
    def url_path(self) -> str:
        """The page's path with "/" for the home page."""
        return self.path or "/"

    def area(self, name: str) -> Area | None:
        return next((a for a in self.areas or [] if a.name == name), None)


class Block(ApiModel):
    id: int
    type: Text = None
    value: Annotated[dict[str, Any], BeforeValidator(_block_value)] = Field(default_factory=dict)
    """As returned: every value a string on a real server; ``{}`` for blocks without a table."""
    page: Annotated[Page | None, BeforeValidator(unwrap)] = None
    """The page (in the version written) for blocks added or updated in an area."""
    pages: Annotated[list[Page] | None, BeforeValidator(lambda v: None if v is None else _as_list(v))] = None


class Area(ApiModel):
    name: str
    blocks: Annotated[list[Block], BeforeValidator(_as_list)] = Field(default_factory=list)
    content: Annotated[Content | None, BeforeValidator(unwrap)] = None


Page.model_rebuild()


class User(ApiModel):
    id: int
    username: Text = None
    email: Text = None
    date_added: Timestamp = None
    status: Text = None
    total_logins: Int = None
    date_password_last_changed: Timestamp = None
    date_last_updated: Timestamp = None
    has_avatar: Flag = None
    avatar: Text = None
    last_login: Int = None
    """Unix seconds, 0 if never."""
    previous_login: Int = None
    timezone: Text = None
    language: Text = None
    groups: Annotated[list[Group] | None, BeforeValidator(lambda v: None if v is None else _as_list(v))] = None
    custom_attributes: Attributes = Field(default_factory=list)


class Locale(ApiModel):
    id: Int = None
    country: Text = None
    language: Text = None
    home_page_id: Int = None

    @property
    def code(self) -> str:
        return f"{self.language or ''}_{self.country or ''}".strip("_")


class Site(ApiModel):
    id: int
    handle: Text = None
    name: Text = None
    home_page_id: Int = None
    default_locale: Text = None
    locales: Annotated[list[Locale], BeforeValidator(_as_list)] = Field(default_factory=list)
    custom_attributes: Attributes = Field(default_factory=list)


class SystemInfo(ApiModel):
    version: Text = None
    code_version: Text = None
    db_version: Text = None
    packages: Text = None
    overrides: Text = None
    cache: Text = None
    server: Text = None
    server_api: Text = None
    php_version: Text = None
    php_extensions: Text = None
    php_settings: Text = None


class DeleteResult(ApiModel):
    id: Annotated[str, BeforeValidator(lambda v: str(v) if isinstance(v, int | float) else v)]
    object: Text = None
    deleted: Annotated[bool, BeforeValidator(lambda v: bool(to_bool(v)))] = True
    version: Annotated[PageVersion | None, BeforeValidator(unwrap)] = None
    """Only for blocks deleted from an area: the (unapproved) version the delete was made in."""
    confirmed_by_retry: bool = False
    """True when the answer was "not found" on a retry after an ambiguous first attempt (the delete had happened)."""


class TokenResponse(ApiModel):
    access_token: str
    token_type: Text = "Bearer"
    expires_in: Int = None
    refresh_token: Text = None
    id_token: Text = None
