"""Strings with references: ``${file:PATH}``, ``${file-id:PATH}``, ``${file-link:PATH}``, ``${page-id:/path}``,
``${page-link:/path}`` and ``$${``.

A :class:`Text` is what a content string becomes after loading: the literal pieces and typed references, in order.
References are resolved only at apply time (to a file's public URL, a file id, a page id), by a resolver the caller
passes to :meth:`Text.render`; the loader only checks that their targets exist.

``Text.source`` is the string exactly as written (``$${`` kept), so dumping a model gives back the written form and
dump → load round-trips. Two texts are equal when their sources are equal.

The two *link* kinds exist for the links an editor puts into rich text, which Concrete stores as placeholders that
follow their target: ``${page-link:/path}`` is stored as ``{CCM:CID_<page id>}`` (the link follows the page when it
moves) and ``${file-link:PATH}`` as ``{CCM:FID_DL_<numeric file id>}`` (a download link). A picture is written
``<concrete-picture fID="${file-id:PATH}" … />``. See ``cmssync.plan.references`` for the translation both ways.

``${env:NAME}`` is not allowed in content strings (design.md §3: only in ``cmssync.yaml`` and user passwords); a
password is parsed with :func:`parse_env_reference` into an :class:`EnvRef` instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from cmssync.content.paths import check_file_reference, check_page_path

_TOKEN = re.compile(r"\$\$\{|\$\{")
_REFERENCE = re.compile(r"\$\{(?P<kind>[A-Za-z][A-Za-z0-9_-]*):(?P<target>[^{}]*)\}")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ENV_REFERENCE = re.compile(r"\$\{env:(?P<name>[^{}]*)\}")


@dataclass(frozen=True)
class _PathRef:
    """A reference to a managed file or page by its path: ``${KIND:PATH}``."""

    KIND: ClassVar[str]
    path: str

    @property
    def source(self) -> str:
        return f"${{{self.KIND}:{self.path}}}"


@dataclass(frozen=True)
class FileUrlRef(_PathRef):
    """``${file:PATH}``: the public URL of the managed file ``files/PATH``."""

    KIND: ClassVar[str] = "file"


@dataclass(frozen=True)
class FileIdRef(_PathRef):
    """``${file-id:PATH}``: the site's id of the managed file ``files/PATH``."""

    KIND: ClassVar[str] = "file-id"


@dataclass(frozen=True)
class FileLinkRef(_PathRef):
    """``${file-link:PATH}``: a download link to the managed file ``files/PATH`` (stored ``{CCM:FID_DL_<id>}``)."""

    KIND: ClassVar[str] = "file-link"


@dataclass(frozen=True)
class PageLinkRef(_PathRef):
    """``${page-link:/path}``: a link to the page at ``/path`` that follows it when it moves (``{CCM:CID_<id>}``)."""

    KIND: ClassVar[str] = "page-link"


@dataclass(frozen=True)
class PageIdRef(_PathRef):
    """``${page-id:/path}``: the site's id of the page at ``/path`` (managed, or listed in ``existing_pages``)."""

    KIND: ClassVar[str] = "page-id"


@dataclass(frozen=True)
class EnvRef:
    """``${env:NAME}``: an environment variable, read only when its value is needed (never at validate time)."""

    name: str

    @property
    def source(self) -> str:
        return f"${{env:{self.name}}}"

    def __str__(self) -> str:
        return self.source


Reference = FileUrlRef | FileIdRef | FileLinkRef | PageIdRef | PageLinkRef
Part = str | Reference
Resolver = Callable[[Reference], str]

_REFERENCE_KINDS = "file, file-id, file-link, page-id, page-link"


def _escape_help() -> str:
    return "write $${ for a literal ${"


_FILE_KINDS: dict[str, type[FileUrlRef] | type[FileIdRef] | type[FileLinkRef]] = {
    "file": FileUrlRef,
    "file-id": FileIdRef,
    "file-link": FileLinkRef,
}
_PAGE_KINDS: dict[str, type[PageIdRef] | type[PageLinkRef]] = {"page-id": PageIdRef, "page-link": PageLinkRef}


def parse_parts(source: str) -> tuple[Part, ...]:
    """Split ``source`` into literal strings and references; ``ValueError`` with a short reason when malformed."""
    parts: list[Part] = []
    literal: list[str] = []
    position = 0
    for token in _TOKEN.finditer(source):
        if token.start() < position:
            continue
        literal.append(source[position : token.start()])
        if token.group(0) == "$${":
            literal.append("${")
            position = token.end()
            continue
        reference = _parse_reference(source, token.start())
        if "".join(literal):
            parts.append("".join(literal))
        literal = []
        parts.append(reference)
        position = token.start() + len(reference.source)
    literal.append(source[position:])
    if "".join(literal):
        parts.append("".join(literal))
    return tuple(parts)


def _parse_reference(source: str, start: int) -> Reference:
    match = _REFERENCE.match(source, start)
    if match is None:
        snippet = source[start : start + 30].split("\n")[0]
        raise ValueError(
            f"malformed reference {snippet!r}: use ${{file:PATH}}, ${{file-id:PATH}}, ${{file-link:PATH}}, "
            f"${{page-id:/path}} or ${{page-link:/path}}; "
            f"{_escape_help()}"
        )
    kind, target = match.group("kind"), match.group("target")
    if kind == "env":
        raise ValueError(f"${{env:{target}}} is allowed only in cmssync.yaml and user passwords, not in content")
    if kind in _FILE_KINDS:
        check_file_reference(target)
        return _FILE_KINDS[kind](target)
    if kind in _PAGE_KINDS:
        check_page_path(target, existing=True)
        return _PAGE_KINDS[kind](target)
    raise ValueError(f"unknown reference kind {kind!r} (known: {_REFERENCE_KINDS}); {_escape_help()}")


class Text:
    """A content string: literal parts and references, comparable and hashable by its written ``source``."""

    __slots__ = ("parts", "source")

    parts: tuple[Part, ...]
    source: str

    def __init__(self, source: str) -> None:
        source = str(source)  # a plain str, also for ruamel's scalar-string subclasses
        object.__setattr__(self, "parts", parse_parts(source))
        object.__setattr__(self, "source", source)

    @classmethod
    def of(cls, *parts: Part) -> Text:
        """Build from parts; literal ``${`` is escaped so that ``Text.of(*t.parts) == t`` for escaped sources."""
        written = "".join(p.replace("${", "$${") if isinstance(p, str) else p.source for p in parts)
        return cls(written)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Text is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled with its parts, so that unpickling (the parse cache) does not parse the source again.
        return _restore_text, (self.source, self.parts)

    @property
    def references(self) -> tuple[Reference, ...]:
        return tuple(p for p in self.parts if not isinstance(p, str))

    def render(self, resolver: Resolver) -> str:
        """The final string: literal parts as they are (``$${`` already unescaped), references through ``resolver``."""
        return "".join(p if isinstance(p, str) else resolver(p) for p in self.parts)

    @property
    def plain(self) -> str | None:
        """The unescaped string when there are no references, else ``None``."""
        return None if self.references else "".join(str(p) for p in self.parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Text) and other.source == self.source

    def __hash__(self) -> int:
        return hash(("Text", self.source))

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return f"Text({self.source!r})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source_type: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            _validate_text,
            serialization=core_schema.plain_serializer_function_ser_schema(
                _text_source, return_schema=core_schema.str_schema()
            ),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "type": "string",
            "description": (
                "Text; may hold ${file:PATH}, ${file-id:PATH}, ${file-link:PATH}, ${page-id:/path} or "
                "${page-link:/path}; $${ is a literal ${"
            ),
        }


def _restore_text(source: str, parts: tuple[Part, ...]) -> Text:
    text = object.__new__(Text)
    object.__setattr__(text, "parts", parts)
    object.__setattr__(text, "source", source)
    return text


def _validate_text(value: Any) -> Text:
    if isinstance(value, Text):
        return value
    if isinstance(value, str):
        return Text(value)
    raise ValueError("expected a string")


def _text_source(value: Any) -> Any:
    return value.source if isinstance(value, Text) else value


def parse_env_reference(value: str) -> EnvRef:
    """``"${env:NAME}"`` (the whole string) → ``EnvRef``; anything else is refused as a literal secret."""
    match = _ENV_REFERENCE.fullmatch(value.strip())
    if match is None:
        raise ValueError(
            "a password must be an environment reference such as ${env:EDITOR_PASSWORD}; "
            "a literal password is not allowed (the content lives in git)"
        )
    name = match.group("name")
    if not ENV_NAME.fullmatch(name):
        raise ValueError(f"invalid environment variable name {name!r}")
    return EnvRef(name)


def iter_texts(value: object) -> Iterator[tuple[tuple[str | int, ...], Text]]:
    """Every ``Text`` inside a model dump of python objects, with its loc (used for reference checks)."""
    from pydantic import BaseModel

    if isinstance(value, Text):
        yield (), value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            for loc, text in iter_texts(getattr(value, name)):
                yield (name, *loc), text
    elif isinstance(value, dict):
        for key, item in value.items():
            for loc, text in iter_texts(item):
                yield (key, *loc), text
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            for loc, text in iter_texts(item):
                yield (index, *loc), text
