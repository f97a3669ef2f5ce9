"""``ConcreteClient``: one typed async method per endpoint of the Concrete CMS REST API 1.0.

Build it from settings (``ConcreteClient.from_settings(settings, base_dir=...)``) or explicitly (tests), and use it
as an async context manager so the connection pool is closed. All calls share one limiter (``limiter``): at most
``concurrency`` requests in flight, or an adaptive limit when ``concurrency`` is None (``auto``); every request
is counted in :attr:`ConcreteClient.stats`. The endpoint groups live in ``pages``, ``files`` and ``users``; the
transport rules (retries, re-authentication, errors) in ``transport``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import TracebackType
from typing import Self

import httpx

from cmssync.api.auth import DEFAULT_SCOPES, TOKEN_PATH, OAuthTokens, StaticToken, TokenSource
from cmssync.api.files import FilesApi
from cmssync.api.models import Site, SystemInfo, User
from cmssync.api.pages import PagesApi
from cmssync.api.pagination import includes_param
from cmssync.api.retry import Kind, RetryPolicy
from cmssync.api.stats import RequestStats
from cmssync.api.token_cache import token_cache_for
from cmssync.api.transport import Transport
from cmssync.api.users import UsersApi
from cmssync.config import DEFAULT_API_PREFIX, Settings
from cmssync.errors import ConfigError

PROBE_WAITS = (0.2, 0.4, 0.8, 1.6, 2.0, 2.0, 2.0)
"""Seconds between tries of :meth:`ConcreteClient.probe` (eight tries, about 9 s of waiting in all)."""


class ConcreteClient(PagesApi, FilesApi, UsersApi):
    """The API client. Methods raise subclasses of :class:`cmssync.errors.ApiError` (see ``cmssync.api.errors``)."""

    def __init__(
        self,
        base_url: str,
        *,
        auth: TokenSource | None,
        api_prefix: str = DEFAULT_API_PREFIX,
        concurrency: int | None = 8,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        stats: RequestStats | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        site_handle: str | None = None,
    ) -> None:
        self.site_handle = site_handle
        """The site of a multi-site installation this client's runs manage (None: the default site)."""
        super().__init__(
            Transport(
                base_url,
                api_prefix=api_prefix,
                auth=auth,
                concurrency=concurrency,
                timeout=timeout,
                retry=retry,
                stats=stats,
                transport=transport,
            )
        )

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        base_dir: Path,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> ConcreteClient:
        """A client for ``settings.site`` with the credentials of ``settings.auth``; raises ``ConfigError`` when
        something the grant needs is missing. ``base_dir`` (the content directory) anchors a relative token store."""
        if not settings.site.url:
            raise ConfigError("site.url is not set (cmssync.yaml site.url or CMSSYNC_URL)")
        return cls(
            settings.site.url,
            auth=token_source(settings, base_dir=base_dir),
            api_prefix=settings.site.api_prefix,
            concurrency=settings.concurrency_limit,
            timeout=settings.timeout,
            retry=retry,
            transport=transport,
            site_handle=settings.site.handle,
        )

    # -- lifecycle ------------------------------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._t.aclose()

    @property
    def stats(self) -> RequestStats:
        return self._t.stats

    @property
    def base_url(self) -> str:
        return self._t.base_url

    @property
    def api_url(self) -> str:
        return self._t.api_url

    @property
    def transport(self) -> Transport:
        return self._t

    async def access_token(self) -> str | None:
        """The bearer token in use (fetching one if needed); for diagnostics such as the granted scopes."""
        if self._t.auth is None:
            return None
        return await self._t.auth.token(self._t.post_token)

    # -- account, system, sites -----------------------------------------------------------------------------------

    async def account(self, *, includes: tuple[str, ...] = (), as_guest: bool = False) -> User:
        """The user the token acts as. A client-credentials token (Guest) makes a real site answer 500: with
        ``as_guest`` that 500 is expected, so it is raised at once instead of being tried again."""
        return await self._one(
            User,
            "GET",
            "/account",
            kind=Kind.READ,
            params=includes_param(includes),
            expected=(500,) if as_guest else (),
        )

    async def probe(self) -> tuple[int, str]:
        """``GET /system/info`` without a token: its status and content type (an enabled API answers 401 in JSON,
        a disabled one the HTML 404 page). Tried again on a dropped connection, 429 and 5xx (a flaky site)."""
        for wait in (*PROBE_WAITS, None):
            try:
                response = await self.transport.http.get(self.api_url + "/system/info")
            except httpx.TransportError:
                if wait is None:
                    raise
            else:
                if wait is None or (response.status_code != 429 and response.status_code < 500):
                    return response.status_code, response.headers.get("content-type", "")
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    async def system_info(self) -> SystemInfo:
        return await self._get(SystemInfo, "/system/info")

    async def list_sites(self, *, includes: tuple[str, ...] = ()) -> list[Site]:
        body = await self._t.call("GET", "/sites", kind=Kind.READ, params=includes_param(includes))
        return self._models(Site, body, method="GET", route="/sites")

    async def default_site(self, *, includes: tuple[str, ...] = ("locales",)) -> Site:
        return await self._get(Site, "/sites/default", params=includes_param(includes))

    async def get_site(self, site_id: int, *, includes: tuple[str, ...] = ("locales", "custom_attributes")) -> Site:
        return await self._get(Site, "/sites/{site_id}", params=includes_param(includes), site_id=site_id)


def token_source(settings: Settings, *, base_dir: Path) -> TokenSource:
    """The token source ``settings.auth`` describes (design.md §7)."""
    auth = settings.auth
    if auth.grant == "token":
        if auth.token is None:
            raise ConfigError("auth.grant is token but no token is set (CMSSYNC_TOKEN)")
        return StaticToken(auth.token.get_secret_value())
    if not auth.client_id:
        raise ConfigError(f"auth.grant {auth.grant} needs auth.client_id (CMSSYNC_CLIENT_ID)")
    missing = []
    if auth.client_secret is None:
        missing.append("auth.client_secret (CMSSYNC_CLIENT_SECRET)")
    if auth.grant == "password":
        if not auth.username:
            missing.append("auth.username (CMSSYNC_USERNAME)")
        if auth.password is None:
            missing.append("auth.password (CMSSYNC_PASSWORD)")
    if missing:
        raise ConfigError(f"auth.grant {auth.grant} needs {', '.join(missing)}")
    store = Path(auth.token_store)
    if not store.is_absolute():
        store = base_dir / store
    assert settings.site.url is not None
    return OAuthTokens(
        token_url=settings.site.url.rstrip("/") + TOKEN_PATH,
        grant=auth.grant,
        client_id=auth.client_id,
        client_secret=auth.client_secret.get_secret_value() if auth.client_secret else None,
        username=auth.username,
        password=auth.password.get_secret_value() if auth.password else None,
        refresh_token=auth.refresh_token.get_secret_value() if auth.refresh_token else None,
        scopes=auth.scopes if auth.scopes is not None else DEFAULT_SCOPES,
        token_store=store if auth.grant == "refresh_token" else None,
        cache=token_cache_for(settings, base_dir=base_dir),
    )
