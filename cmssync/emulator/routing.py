"""The route table of ``concrete/routes/api/*.php`` and the dispatcher in front of it.

Matching follows Concrete's router: the path is trimmed of leading/trailing slashes (``/sites/`` is ``/sites``, but
``//system/info`` is nothing), ``/index.php`` in front is allowed, ``HEAD`` is ``GET``, ids with a "digits"
requirement only match digits. A path or method that matches no route is served as a CMS page: the HTML
"Page Not Found" page (JSON with ``X-Requested-With: XMLHttpRequest``), before any authentication. A matched route
then authenticates the bearer token, checks the route's scope and runs the controller.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from cmssync.emulator import (
    auth,
    filestore,
    public,
    responses,
    routes_blocks,
    routes_files,
    routes_misc,
    routes_pages,
    routes_users,
    routes_versions,
)
from cmssync.emulator.catalog import POST_MAX_BYTES
from cmssync.emulator.context import ApiError, Ctx
from cmssync.emulator.phperror import PhpError
from cmssync.emulator.render import Renderer, parse_includes
from cmssync.emulator.runtime import Emulator
from cmssync.emulator.store import now as now  # the clock of every route (tests move it), and of the Date header

log = logging.getLogger("cmssync.emulator")
Handler = Callable[[Ctx], Awaitable[Response]]
ROUTE_KEY = "cmssync.emulator.route"


@dataclass(frozen=True)
class ApiRoute:
    method: str
    template: str
    scope: str
    handler: Handler
    pattern: re.Pattern[str]
    #: The controller reads PHP form fields (the body is left for the form parser, not read as JSON).
    reads_form: bool = False


def _route(
    method: str, template: str, scope: str, handler: Handler, digits: tuple[str, ...] = (), reads_form: bool = False
) -> ApiRoute:
    def segment(match: re.Match[str]) -> str:
        name = match.group(1)
        return rf"(?P<{name}>\d+)" if name in digits else rf"(?P<{name}>[^/]+)"

    regex = re.sub(r"\{(\w+)\}", segment, re.escape(template.strip("/")).replace(r"\{", "{").replace(r"\}", "}"))
    return ApiRoute(method, template, scope, handler, re.compile(f"^{regex}$"), reads_form)


ROUTES: tuple[ApiRoute, ...] = (
    _route("GET", "/system/info", "system:info:read", routes_misc.system_info),
    _route("GET", "/sites", "sites:read", routes_misc.list_sites),
    _route("GET", "/sites/default", "sites:read", routes_misc.default_site),
    _route("GET", "/sites/{siteID}", "sites:read", routes_misc.read_site),
    _route("GET", "/account", "account:read", routes_users.account),
    _route("GET", "/files", "files:read", routes_files.list_files),
    _route("GET", "/files/{fID}", "files:read", routes_files.read),
    _route("POST", "/files", "files:add", routes_files.upload, reads_form=True),
    _route("PUT", "/files/{fID}", "files:update", routes_files.update),
    _route("POST", "/files/{fID}/move", "files:update", routes_files.move, reads_form=True),
    _route("DELETE", "/files/{fID}", "files:delete", routes_files.delete),
    _route("GET", "/users", "users:read", routes_users.list_users),
    _route("GET", "/users/{uID}", "users:read", routes_users.read, ("uID",)),
    _route("POST", "/users", "users:add", routes_users.create),
    _route("PUT", "/users/{uID}", "users:update", routes_users.update, ("uID",)),
    _route(
        "POST", "/users/{uID}/change_password", "users:update", routes_users.change_password, ("uID",), reads_form=True
    ),
    _route("DELETE", "/users/{uID}", "users:delete", routes_users.delete, ("uID",)),
    _route("GET", "/groups", "groups:read", routes_users.list_groups),
    _route("GET", "/groups/{gID}", "groups:read", routes_users.read_group, ("gID",)),
    _route("POST", "/groups", "groups:add", routes_users.create_group),
    _route("GET", "/pages", "pages:read", routes_pages.list_pages),
    _route("GET", "/pages/{pageID}/children", "pages:read", routes_pages.children),
    _route("POST", "/pages", "pages:add", routes_pages.create),
    _route("GET", "/pages/{pageID}", "pages:read", routes_pages.read, ("pageID",)),
    _route("PUT", "/pages/{cID}", "pages:update", routes_pages.update),
    _route("DELETE", "/pages/{pageID}", "pages:delete", routes_pages.delete, ("pageID",)),
    _route("POST", "/pages/{pageID}/{areaHandle}", "pages:areas:add_block", routes_blocks.add, ("pageID",)),
    _route(
        "PUT",
        "/pages/{pageID}/{areaHandle}/{blockID}",
        "pages:areas:update_block",
        routes_blocks.update,
        ("pageID", "blockID"),
    ),
    _route(
        "DELETE",
        "/pages/{pageID}/{areaHandle}/{blockID}",
        "pages:areas:delete_block",
        routes_blocks.remove,
        ("pageID", "blockID"),
    ),
    _route("GET", "/page_versions/{pageID}", "pages:versions:read", routes_versions.list_versions, ("pageID",)),
    _route(
        "GET",
        "/page_versions/{pageID}/{versionID}",
        "pages:versions:read",
        routes_versions.read,
        ("pageID", "versionID"),
    ),
    _route(
        "PUT",
        "/page_versions/{pageID}/{versionID}",
        "pages:versions:update",
        routes_versions.update,
        ("pageID", "versionID"),
    ),
    _route(
        "DELETE",
        "/page_versions/{pageID}/{versionID}",
        "pages:versions:delete",
        routes_versions.delete,
        ("pageID", "versionID"),
    ),
    _route("GET", "/blocks/{bID}", "blocks:read", routes_blocks.read, ("bID",)),
    _route("DELETE", "/blocks/{bID}", "blocks:delete", routes_blocks.delete, ("bID",)),
)

_FILE_URL = re.compile(r"^application/files/(\d{4}/\d{4}/\d{4})/([^/]+)$")
_DOWNLOAD_URL = re.compile(r"^download_file/([^/]+)(?:/\d+)?$")
_VIEW_URL = re.compile(r"^download_file/view/([^/]+)(?:/\d+)?$")


def match(method: str, trimmed: str) -> tuple[ApiRoute, dict[str, str]] | None:
    for candidate in ROUTES:
        if candidate.method != method:
            continue
        found = candidate.pattern.match(trimmed)
        if found:
            return candidate, found.groupdict()
    return None


def label_for(emu: Emulator, method: str, path: str) -> str:
    """The route template a request would reach (for statistics of requests that a fault answered)."""
    if path == "/index.php" or path.startswith("/index.php/"):
        path = path[len("/index.php") :]
    trimmed = path.strip("/")
    if trimmed == "oauth/2.0/token":
        return "/oauth/2.0/token"
    for prefix in emu.prefixes:
        head = prefix.strip("/") + "/"
        if trimmed.startswith(head):
            found = match("GET" if method == "HEAD" else method, trimmed[len(head) :])
            if found is not None:
                return found[0].template
    return "(unrouted)"


async def read_body(request: Request) -> bytes:
    """The raw body, or nothing when it is over ``post_max_size`` (PHP then sees an empty request)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > POST_MAX_BYTES:
            return b""
        chunks.append(chunk)
    return b"".join(chunks)


async def dispatch(request: Request, emu: Emulator) -> Response:
    path = request.scope["path"]
    if path == "/index.php" or path.startswith("/index.php/"):
        path = path[len("/index.php") :]
    trimmed = path.strip("/")
    method = "GET" if request.method == "HEAD" else request.method
    xhr = request.headers.get("x-requested-with", "").lower() == "xmlhttprequest"
    if trimmed == "oauth/2.0/token" and method == "POST":
        request.scope[ROUTE_KEY] = "/oauth/2.0/token"
        return await auth.token_endpoint(request, emu)
    if trimmed == "ccm/system/api/openapi.json" and method == "GET":
        # The API documentation endpoint without a session dies on a missing class (recorded on 9.3.1).
        request.scope[ROUTE_KEY] = "/ccm/system/api/openapi.json"
        return responses.whoops(
            "Error",
            'Class "UserMessageException" not found',
            xhr,
            file="<site-root>/concrete/controllers/api/open_api.php",
            line=31,
        )
    if method == "GET":
        served = _public_file(request, emu, trimmed)
        if served is not None:
            return served
    for prefix in emu.prefixes:
        head = prefix.strip("/") + "/"
        if trimmed.startswith(head):
            found = match(method, trimmed[len(head) :])
            if found is not None:
                request.scope[ROUTE_KEY] = found[0].template
                return await _run(request, emu, found[0], found[1], xhr)
    if method == "GET" and not xhr:
        base_url = str(request.base_url).rstrip("/")
        shown = public.page_response(emu.store, trimmed, base_url, request.headers.get("host", ""))
        if shown is not None:
            request.scope[ROUTE_KEY] = "(page)"
            return shown
    request.scope[ROUTE_KEY] = "(unrouted)"
    return responses.not_found_page(emu.store.get_meta("site_name", "Sandbox Site"), xhr)


def _public_file(request: Request, emu: Emulator, trimmed: str) -> Response | None:
    found = _FILE_URL.match(trimmed)
    if found:
        request.scope[ROUTE_KEY] = "/application/files/{path}"
        row = emu.store.one("SELECT * FROM files WHERE prefix = ? AND filename = ?", found.group(1), found.group(2))
        if row is not None:
            return routes_files.serve_bytes(row, download=False)
    found = _VIEW_URL.match(trimmed)
    if found:
        request.scope[ROUTE_KEY] = "/download_file/view/{fID}"
        return public.download_view(emu.store, found.group(1), str(request.base_url).rstrip("/"))
    found = _DOWNLOAD_URL.match(trimmed)
    if found:
        request.scope[ROUTE_KEY] = "/download_file/{fID}"
        row = filestore.find(emu.store, found.group(1))
        if row is not None:
            return routes_files.serve_bytes(row, download=True)
    return None


async def _run(request: Request, emu: Emulator, route: ApiRoute, params: dict[str, str], xhr: bool) -> Response:
    try:
        caller = auth.authenticate(request, emu)
    except auth.OAuthFailure as failure:
        return failure.response
    if route.scope not in caller.scopes:
        return auth.out_of_scope()
    renderer = Renderer(emu.store, emu.dialect, str(request.base_url).rstrip("/"))
    body = b"" if route.reads_form or request.method in ("GET", "HEAD", "DELETE") else await read_body(request)
    ctx = Ctx(
        request=request,
        emu=emu,
        params=params,
        caller=caller,
        render=renderer,
        now=now(),
        body=body,
        includes=parse_includes(request.query_params.multi_items()),
    )
    try:
        return await route.handler(ctx)
    except ApiError as error:
        if ctx.documented and error.documented is not None:
            return responses.plain_text(error.documented[1], error.documented[0])
        return responses.error_list(error.messages, error.status, error.fields)
    except PhpError as error:
        return responses.whoops(error.exception_class, error.message, xhr)
    except Exception as error:  # a bug in the emulator: answer like an uncaught PHP error, keep serving
        log.exception("emulator error in %s %s", request.method, request.url.path)
        return responses.whoops(type(error).__name__, str(error), xhr)
