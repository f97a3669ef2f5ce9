"""``cmssync status``: can cmssync reach the site, who does it act as, and what is wrong if anything.

Each check turns a failure into one sentence a site owner can act on (design.md §7): the API switched off (the
token URL or the API URL answers with the site's HTML 404 page), a wrong client secret, the password grant not
enabled, a client-credentials token acting as Guest (``/account`` answers 500), missing scopes. Granted scopes come
from the access token's ``scopes`` claim, read without verifying the signature ("unknown" if it is not a JWT).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cmssync.api.auth import DEFAULT_SCOPES, granted_scopes
from cmssync.api.client import ConcreteClient
from cmssync.api.errors import (
    ApiDisabled,
    AuthenticationFailed,
    OutOfScope,
    ServerError,
    TransportError,
    UnexpectedResponse,
)
from cmssync.api.retry import RetryPolicy
from cmssync.config import Settings
from cmssync.errors import ApiError, CmsSyncError, ConfigError
from cmssync.sync.site_trees import read_site

PATIENT = RetryPolicy(
    attempts=15, timeout=120.0, wait_initial=0.1, wait_max=2.0, wait_jitter=0.2, retry_after_max=5.0, token_attempts=15
)
"""``status`` answers "is the site healthy and in sync", so a flaky site must not read as a broken one: it retries
every read many times with short waits (a site that fails 60% of its answers still converges; one that is down
fails within the budget). The tokenless probe has its own waits (``cmssync.api.client.PROBE_WAITS``); the 500 a
client-credentials token gets from ``/account`` is its answer and is not tried again."""


@dataclass
class StatusReport:
    """What ``cmssync status`` found. ``problems`` empty ⇔ ``ok``."""

    base_url: str | None = None
    api_url: str | None = None
    grant: str | None = None
    reachable: bool = False
    authenticated: bool = False
    account: str | None = None
    site_name: str | None = None
    site_handle: str | None = None
    """The site of a multi-site installation the settings name (``site.handle``), None: the default one."""
    sites: list[str] = field(default_factory=list)
    """The handles of the installation's sites (``GET /sites``)."""
    home_page_id: int | None = None
    locales: list[str] = field(default_factory=list)
    version: str | None = None
    scopes: list[str] | None = None
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def missing_scopes(self) -> list[str]:
        if self.scopes is None:
            return []
        return [s for s in DEFAULT_SCOPES if s not in self.scopes]

    def lines(self) -> list[str]:
        out = [f"site:      {self.base_url or '(not set)'}"]
        if self.api_url:
            out.append(f"api:       {self.api_url} ({'reachable' if self.reachable else 'not reachable'})")
        if self.grant:
            out.append(
                f"auth:      {self.grant} grant, {'authenticated' if self.authenticated else 'not authenticated'}"
            )
        if self.account:
            out.append(f"account:   {self.account}")
        out.extend(self._site_lines())
        if self.version:
            out.append(f"concrete:  {self.version}")
        if self.authenticated:
            out.extend(self._scope_lines())
        out.extend(f"note:      {note}" for note in self.notes)
        out.extend(f"problem:   {problem}" for problem in self.problems)
        out.append("status:    ok" if self.ok else f"status:    {len(self.problems)} problem(s)")
        return out

    def _site_lines(self) -> list[str]:
        """The site the content is for, and the installation's others when it has several."""
        out: list[str] = []
        if self.site_name is not None:
            locales = ", ".join(self.locales) or "unknown"
            which = f"site {self.site_handle}, " if self.site_handle else ""
            out.append(f"site name: {self.site_name} ({which}home page {self.home_page_id}, locales {locales})")
        if len(self.sites) > 1:
            this = self.site_handle or self.sites[0]
            named = ", ".join(f"{handle} (this content)" if handle == this else handle for handle in self.sites)
            out.append(f"sites:     {named}; another one with --site HANDLE and its own content directory")
        return out

    def _scope_lines(self) -> list[str]:
        """The token's scopes, and those cmssync uses that it lacks."""
        if self.scopes is None:
            return ["scopes:    unknown (the access token is not a JWT)"]
        granted = f"scopes:    {len(self.scopes)} granted" + (f": {' '.join(self.scopes)}" if self.scopes else "")
        if not self.missing_scopes:
            return [granted]
        return [granted, f"           missing: {' '.join(self.missing_scopes)}"]


async def diagnose(
    settings: Settings, *, base_dir: Path, client: ConcreteClient | None = None, retry: RetryPolicy | None = None
) -> StatusReport:
    """Check connectivity, credentials, account, default site and system info; never raises for site problems."""
    report = StatusReport(base_url=settings.site.url, grant=settings.auth.grant)
    if client is None:
        try:
            client = ConcreteClient.from_settings(settings, base_dir=base_dir, retry=retry or PATIENT)
        except CmsSyncError as exc:
            report.problems.append(str(exc))
            return report
    async with client:
        report.api_url = client.api_url
        await _check(client, report, settings)
    return report


async def _check_account(client: ConcreteClient, report: StatusReport, settings: Settings) -> None:
    """Whom the token acts as: the super admin, another user (some writes fail), or the Guest of client
    credentials (reads only)."""
    try:
        user = await client.account(as_guest=settings.auth.grant == "client_credentials")
        report.account = f"{user.username} (user {user.id})"
        if user.id != 1 and settings.auth.grant != "client_credentials":
            report.notes.append(
                "not the super admin (user 1): a real Concrete ≤ 9.3 answers 500 to several writes for other users"
            )
    except (ServerError, UnexpectedResponse) as exc:
        if settings.auth.grant == "client_credentials":
            report.account = "Guest (client credentials have no user)"
            report.notes.append(
                "client credentials act as the anonymous Guest: reads only; use the password or refresh_token grant"
                " to apply changes"
            )
        else:
            report.problems.append(_explain("account", exc))
    except ApiError as exc:
        report.problems.append(_explain("account", exc))


async def _check_site(client: ConcreteClient, report: StatusReport) -> None:
    """The site the settings name (the default one unless site.handle), then the installation's sites: those only
    once the site is known, and unknown ones are a note, not a problem."""
    handle = report.site_handle = client.site_handle
    try:
        listed = await client.list_sites() if handle is not None else None
        site = await read_site(client, listed)
        report.site_name = site.name or site.handle or str(site.id)
        report.home_page_id = site.home_page_id
        report.locales = [loc.code for loc in site.locales] or ([site.default_locale] if site.default_locale else [])
    except ApiError as exc:
        report.problems.append(_explain("default site" if handle is None else f"site {handle}", exc))
    except ConfigError as exc:
        report.problems.append(str(exc))
    else:
        try:
            report.sites = [site.handle or str(site.id) for site in listed or await client.list_sites()]
        except ApiError as exc:
            report.notes.append(f"the installation's sites are unknown ({_explain('GET /sites', exc)})")


async def _check_api(client: ConcreteClient, report: StatusReport) -> bool:
    """Whether the API prefix answers, asked without a token: an enabled API answers 401 (JSON); a disabled one
    the HTML 404 page."""
    try:
        status, content_type = await client.probe()
    except Exception as exc:  # httpx errors of every kind: the site is not reachable
        report.problems.append(f"cannot reach {client.api_url}: {type(exc).__name__}: {str(exc)[:120]}")
        return False
    if status == 404 and "json" not in content_type:
        report.problems.append(
            f"{client.api_url}/system/info answers with an HTML 404 page: the REST API is not enabled "
            "(Dashboard → System & Settings → API, or `concrete/bin/concrete c5:config set concrete.api.enabled "
            "true`), or site.api_prefix is wrong"
        )
        return False
    report.reachable = True
    return True


async def _check(client: ConcreteClient, report: StatusReport, settings: Settings) -> None:
    # 1. The API prefix.
    if not await _check_api(client, report):
        return

    # 2. A token.
    try:
        token = await client.access_token()
    except ApiDisabled as exc:
        report.problems.append(f"the token endpoint is missing ({exc.reason})")
        return
    except ApiError as exc:
        report.problems.append(f"cannot get an access token: {exc}")
        return
    report.authenticated = True
    report.scopes = granted_scopes(token) if token else None

    # 3. System info (needs system:info:read).
    try:
        info = await client.system_info()
        report.version = info.version
    except ApiError as exc:
        report.problems.append(_explain("system info", exc))

    # 4. The account.
    await _check_account(client, report, settings)

    # 5. The site the settings name (the default one unless site.handle) and the installation's sites.
    await _check_site(client, report)

    if report.scopes is not None and report.missing_scopes and settings.auth.grant != "client_credentials":
        report.notes.append(
            "the token lacks scopes cmssync uses (the integration may restrict them): "
            + " ".join(report.missing_scopes)
        )


def _explain(what: str, exc: ApiError) -> str:
    if isinstance(exc, OutOfScope):
        return f"{what}: the token lacks the scope for {exc.method} {exc.path} (check the integration's scopes)"
    if isinstance(exc, AuthenticationFailed):
        return f"{what}: the site rejects the access token ({exc.reason})"
    if isinstance(exc, TransportError):
        return f"{what}: {exc.reason}"
    return f"{what}: {exc}"
