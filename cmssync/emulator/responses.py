"""Response bodies exactly as the server writes them: PHP JSON escaping, ErrorLists, league OAuth errors, the CMS's
HTML "Page Not Found" page, the Whoops 500 page (or its JSON form for ``X-Requested-With: XMLHttpRequest``), and the
documented dialect's plain-text errors.

Success bodies are ``json_encode`` output (``/`` written as ``\\/``, non-ASCII as ``\\uXXXX``); error lists and
delete results go through Symfony's ``JsonResponse``, which also escapes ``<>&'"`` as ``\\u003C``…
"""

from __future__ import annotations

import html
import json
from typing import Any

from starlette.responses import Response

JSON = "application/json"
JSON_UTF8 = "application/json; charset=UTF-8"
HTML_404 = "text/html; charset=UTF-8"
HTML_500 = "text/html;charset=UTF-8"
NO_CACHE = {"cache-control": "no-cache, private"}

_SYMFONY_ESCAPES = {"<": "\\u003C", ">": "\\u003E", "&": "\\u0026", "'": "\\u0027", '"': "\\u0022"}


def php_json(value: Any) -> bytes:
    """PHP ``json_encode`` with default flags."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).replace("/", "\\/").encode()


def _symfony_string(text: str) -> str:
    encoded = json.dumps(text, ensure_ascii=True)[1:-1].replace('\\"', '"').replace("/", "\\/")
    # json.dumps escaped backslashes as \\ already; only the five HTML-sensitive characters change.
    return '"' + "".join(_SYMFONY_ESCAPES.get(ch, ch) for ch in encoded) + '"'


def symfony_json(value: Any) -> bytes:
    """Symfony ``JsonResponse`` encoding (``JSON_HEX_TAG | JSON_HEX_APOS | JSON_HEX_AMP | JSON_HEX_QUOT``)."""

    def encode(v: Any) -> str:
        if isinstance(v, str):
            return _symfony_string(v)
        if isinstance(v, dict):
            return "{" + ",".join(f"{_symfony_string(str(k))}:{encode(x)}" for k, x in v.items()) + "}"
        if isinstance(v, list):
            return "[" + ",".join(encode(x) for x in v) + "]"
        return json.dumps(v)

    return encode(value).encode()


def data(value: Any, status: int = 200) -> Response:
    return Response(php_json(value), status_code=status, media_type=None, headers={**NO_CACHE, "content-type": JSON})


def plain_json(value: Any, status: int = 200) -> Response:
    """Delete results and other bodies built with Symfony's ``JsonResponse``."""
    return Response(symfony_json(value), status_code=status, headers={**NO_CACHE, "content-type": JSON})


def error_list(messages: list[str], status: int, fields: dict[str, str] | None = None) -> Response:
    """An ErrorList; a message tied to a form field also names it (``field: {element, name}``)."""
    entries: list[dict[str, Any]] = []
    for message in messages:
        entry: dict[str, Any] = {"message": message, "messageContainsHtml": False}
        if fields and message in fields:
            entry["field"] = {"element": fields[message], "name": fields[message]}
        entries.append(entry)
    body = {"error": True, "errors": messages, "list": entries}
    return plain_json(body, status)


def plain_text(message: str, status: int) -> Response:
    return Response(message, status_code=status, headers={**NO_CACHE, "content-type": "text/plain; charset=UTF-8"})


def oauth_error(
    error: str, description: str, status: int, hint: str | None = None, headers: dict[str, str] | None = None
) -> Response:
    """league/oauth2-server's ``OAuthServerException::generateHttpResponse`` body."""
    body: dict[str, Any] = {"error": error, "error_description": description}
    if hint is not None:
        body["hint"] = hint
    body["message"] = description
    return Response(
        json.dumps(body, separators=(",", ":")).replace("/", "\\/"),
        status_code=status,
        headers={**NO_CACHE, **(headers or {}), "content-type": JSON},
    )


def not_found_page(site_name: str, xhr: bool) -> Response:
    """The CMS's 404 page for an unrouted URL (JSON for XHR requests, from ``ResponseFactory::notFound``)."""
    if xhr:
        return Response(
            b'{"error":"Page not found","errors":["Page not found"]}',
            status_code=404,
            headers={**NO_CACHE, "content-type": JSON},
        )
    title = html.escape(f"Page Not Found :: {site_name}")
    body = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n    <meta http-equiv="X-UA-Compatible" content="IE=edge">\n'
        f'<title>{title}</title>\n</head>\n<body>\n<div class="ccm-page">\n<main>\n'
        "<h1>Page Not Found</h1>\n<p>No page could be found at this address.</p>\n</main>\n</div>\n</body>\n</html>\n"
    )
    return Response(body, status_code=404, headers={**NO_CACHE, "content-type": HTML_404})


def whoops(exception_class: str, message: str, xhr: bool, file: str = "", line: int = 0) -> Response:
    """An uncaught exception as Concrete's Whoops handler answers it (debug detail, display_errors on)."""
    where = file or "<site-root>/concrete/src/Api/ApiController.php"
    if xhr:
        short = exception_class.rsplit("\\", 1)[-1]
        body = {
            "error": {
                "type": exception_class,
                "message": message,
                "code": 0,
                "file": where,
                "line": line,
                "trace": [{"file": where, "line": line, "function": None, "class": short, "args": [message]}],
            },
            "errors": [message],
        }
        return Response(
            json.dumps(body, separators=(",", ":")).replace("/", "\\/"),
            status_code=500,
            headers={"content-type": JSON_UTF8},
        )
    escaped = html.escape(message)
    page = (
        f"<!DOCTYPE html><!--\n\n\n{html.escape(exception_class)}: {escaped} in file {html.escape(where)}"
        f" on line {line}\nStack trace:\n  1. {html.escape(exception_class)}-&gt;() {html.escape(where)}:{line}\n\n-->"
        '<html><head><meta charset="utf-8"><title>Concrete CMS has encountered an issue.</title></head><body>'
        f'<div class="Whoops container"><div class="exception"><div class="exc-title">'
        f'<span class="exc-title-primary">{html.escape(exception_class.rsplit(chr(92), 1)[-1])}</span></div>'
        f'<span id="plain-exception">{escaped}</span><div class="exc-message"><span>{escaped}</span></div>'
        "</div></div></body></html>"
    )
    return Response(page, status_code=500, headers={"content-type": HTML_500})


def unexpected_error_page(message: str) -> Response:
    """Concrete's own "An unexpected error occurred." page (an importer error during upload, for example)."""
    page = (
        '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" '
        '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">\n<html lang="en" xmlns="http://www.w3.org/1999/xhtml">'
        '\n<head>\n<meta http-equiv="content-type" content="text/html; charset=UTF-8">\n</head>\n<body>\n'
        '<div class="ccm-ui"><div class="container"><div class="row"><div class="col-sm-10 col-sm-offset-1">'
        f'<div class="alert alert-danger"><h3>An unexpected error occurred.</h3>{html.escape(message)}</div>'
        "</div></div></div></div>\n</body>\n</html>\n"
    )
    return Response(page, status_code=500, headers={**NO_CACHE, "content-type": HTML_404})
