"""What apply writes for a file or a user, carried by the plan (as :mod:`cmssync.plan.page_form` is for a page).

A file action that uploads or changes metadata carries a :class:`FileForm` (``Action.file``): the SHA-256 and size
of its bytes, its folder and the metadata the content manages; a user create or update carries a :class:`UserForm`
(``Action.user``): email, language and the *name* of the environment variable that holds its password, never the
password, which apply reads from the environment when it sets it. So apply, and a saved plan's freshness check,
never go back to the content's specs. The bytes of an upload travel separately: read from the content directory by
a plain ``apply``, or carried by the plan file (``cmssync.sync.uploads``).

The state's records of a file or user are made from the same forms, so apply and ``pull`` record one digest.
Pure.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from cmssync.content.fields import Location
from cmssync.content.files import FileSpec
from cmssync.content.models import UserSpec
from cmssync.plan.normalize import digest, normalize_attribute, normalize_tags, normalize_text


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FileForm(_Frozen):
    """A file as the content wants it: its bytes (by hash and size), its folder and its managed metadata."""

    sha256: str
    """``sha256:<hex>`` of the bytes (a saved plan's upload is verified against it)."""
    size: int
    folder_id: int | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    """The managed metadata in comparable form (:func:`desired_file_meta`)."""

    @property
    def digest(self) -> str:
        """What the state records for the metadata (the planner compares the record with it)."""
        return digest(self.meta)


class UserForm(_Frozen):
    """A user as the content wants it; its password only as the variable that holds it."""

    email: str
    language: str | None = None
    password: str | None = None
    """The environment variable's name (``${env:NAME}``), read at apply time; never its value."""
    source: Location | None = None
    """Where the content wrote the user, for the located error when the variable is unset."""

    @property
    def digest(self) -> str:
        """What the state records for the user (:func:`user_digest`)."""
        return _user_digest(self.email, self.language)


def file_form(spec: FileSpec) -> FileForm:
    return FileForm(sha256=file_hash(spec), size=spec.size, folder_id=spec.folder_id, meta=desired_file_meta(spec))


def user_form(spec: UserSpec) -> UserForm:
    password = spec.password.name if spec.password is not None else None
    return UserForm(email=spec.email, language=spec.language, password=password, source=spec.source)


def file_hash(spec: FileSpec) -> str:
    """The content hash in the state's form, ``sha256:<hex>``."""
    return spec.sha256 if spec.sha256.startswith("sha256:") else f"sha256:{spec.sha256}"


def file_digest(spec: FileSpec) -> str:
    """The digest the state records for a file's metadata: the content's, as applied (one rule for apply and pull)."""
    return digest(desired_file_meta(spec))


def user_digest(spec: UserSpec) -> str:
    """The digest the state records for a user: the content's email and language, as applied (apply and pull)."""
    return _user_digest(spec.email, spec.language)


def _user_digest(email: str, language: str | None) -> str:
    return digest({"email": email, "language": language})


def desired_file_meta(spec: FileSpec) -> dict[str, Any]:
    """The metadata the content manages for a file, in comparable form."""
    meta = spec.meta
    wanted: dict[str, Any] = {}
    if meta.title is not None:
        wanted["title"] = normalize_text(meta.title.plain if meta.title.plain is not None else meta.title.source)
    if meta.description is not None:
        text = meta.description.plain if meta.description.plain is not None else meta.description.source
        wanted["description"] = normalize_text(text)
    if meta.tags:
        wanted["tags"] = normalize_tags(meta.tags)
    if spec.folder_id is not None:
        wanted["folder"] = spec.folder_id
    for name in ("width", "height", "duration"):
        value = getattr(meta.attributes, name)
        if value is not None:
            wanted[f"attributes.{name}"] = normalize_attribute(value, attribute_type="number")
    return wanted
