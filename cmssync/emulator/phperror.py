"""An uncaught exception on the real server (HTTP 500 with the Whoops page), raised anywhere in the sandbox."""

from __future__ import annotations


class PhpError(Exception):
    """An uncaught exception on the real server: HTTP 500 with the Whoops page."""

    def __init__(self, exception_class: str, message: str) -> None:
        super().__init__(message)
        self.exception_class = exception_class
        self.message = message
