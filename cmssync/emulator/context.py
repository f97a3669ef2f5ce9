"""What a route handler gets (``Ctx``) and the two ways it fails: an ErrorList answer (:class:`ApiError`) or an
uncaught PHP exception (:class:`PhpError`, a Whoops 500).

Request bodies are read the way the controllers read them: ``json_decode($request->getContent(), true)``
regardless of the Content-Type, where invalid JSON is the same as no body; a few endpoints read form fields instead.
PHP 8 turns a read of a missing array key into an exception, which the helpers here raise as :class:`PhpError`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from cmssync.emulator.caller import Caller
from cmssync.emulator.phperror import PhpError
from cmssync.emulator.render import Renderer
from cmssync.emulator.store import Store

if TYPE_CHECKING:
    from cmssync.emulator.runtime import Emulator


class ApiError(Exception):
    """``ApiController::error()``: an ErrorList with a status (often 400 where 401/403/404 was meant).

    ``documented`` is what the documented dialect answers instead: a status and a plain-text message.
    """

    def __init__(
        self,
        status: int,
        *messages: str,
        documented: tuple[int, str] | None = None,
        fields: dict[str, str] | None = None,
    ) -> None:
        super().__init__(messages[0] if messages else "")
        self.status = status
        self.messages = list(messages)
        self.documented = documented
        self.fields = fields or {}
        """message -> the form field it names (a validation error's ``field``)."""


MAX_ID = 2**63 - 1


def as_id(text: str) -> int | None:
    """A decimal id, or ``None`` when the text is not one (or too large to be a database id)."""
    if not text.isdigit() or not text.isascii():
        return None
    value = int(text)
    return value if value <= MAX_ID else None


def php_type(value: object) -> str:
    """PHP's name of a decoded JSON value's type, as TypeError messages print it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    return {int: "int", float: "float", str: "string", list: "array", dict: "array"}.get(type(value), "mixed")


def missing_key(key: str) -> PhpError:
    return PhpError("Whoops\\Exception\\ErrorException", f'Undefined array key "{key}"')


def null_offset() -> PhpError:
    return PhpError("Whoops\\Exception\\ErrorException", "Trying to access array offset on value of type null")


@dataclass
class Ctx:
    request: Request
    emu: Emulator
    params: dict[str, str]
    caller: Caller
    render: Renderer
    now: int
    body: bytes = b""
    includes: set[str] = field(default_factory=set)

    @property
    def store(self) -> Store:
        return self.emu.store

    @property
    def documented(self) -> bool:
        return self.render.documented

    @property
    def xhr(self) -> bool:
        return self.request.headers.get("x-requested-with", "").lower() == "xmlhttprequest"

    def query(self, name: str) -> str | None:
        return self.request.query_params.get(name)

    def json(self) -> Any:
        """The decoded body, or ``None`` when it is empty or not valid JSON (PHP's ``json_decode``)."""
        if not self.body:
            return None
        try:
            return json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            return None

    def json_object(self) -> dict[str, Any]:
        """The body as an associative array; a body that is not one makes every key read fail like PHP's."""
        data = self.json()
        if data is None:
            raise null_offset()
        if not isinstance(data, dict):
            raise PhpError("TypeError", "Cannot access offset on value of type " + type(data).__name__)
        return data

    def int_param(self, name: str) -> int:
        """A digits-only path parameter as an id (ids beyond SQLite's range name nothing: -1)."""
        return as_id(self.params[name]) or -1


def denied(status: int, message: str, action: str) -> ApiError:
    """A permission refusal; the documented dialect says 401 with its generic wording (access/delete/update)."""
    return ApiError(
        status, message, documented=(401, f"You do not have the proper permissions to {action} this resource")
    )


def not_found(status: int, message: str, documented_message: str | None = None) -> ApiError:
    """A missing object; the documented dialect answers 404 with the message without its trailing period."""
    return ApiError(status, message, documented=(404, documented_message or message.rstrip(".")))
