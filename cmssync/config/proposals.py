"""The ``proposals`` section: where the daemon commits editors' approved changes (``drift: propose``), and the
optional pull or merge request it keeps open for that branch (docs/two-way.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator

from cmssync.config.values import Section, require_http_url

DEFAULT_PROPOSAL_BRANCH = "cmssync/site-changes"


class ForgeSettings(Section):
    """A pull request (GitHub, Gitea) or merge request (GitLab) opened for the proposal branch, or updated when one
    is open; only when ``token`` is set."""

    type: Literal["github", "gitlab", "gitea"]
    """The forge's REST API."""
    repository: str = Field(min_length=3)
    """``owner/name`` (GitLab: the project's path ``group/project`` or its numeric id)."""
    token: SecretStr | None = None
    """A token allowed to open pull requests; from ``${env:NAME}``. Unset: no pull request is opened."""
    url: str | None = None
    """The API's address: default ``https://api.github.com``, ``https://gitlab.com/api/v4``; required for Gitea
    (``https://gitea.example.com/api/v1``)."""
    base: str = "main"
    """The branch the pull request asks to merge into."""

    @field_validator("url")
    @classmethod
    def _url_is_http(cls, value: str | None) -> str | None:
        if value is not None:
            require_http_url(value, "proposals.forge url")
        return value


class ProposalSettings(Section):
    """``cmssync daemon`` under ``drift: propose``: each approved editor change the drift feed notices becomes a
    commit on ``branch`` (the content directory must be in a git repository), pushed to ``remote``."""

    branch: str = Field(DEFAULT_PROPOSAL_BRANCH, min_length=1)
    """The branch that collects the editors' changes (never the checked-out one; created from HEAD if missing)."""
    remote: str | None = None
    """The git remote the branch is pushed to after each commit (``origin``), and under ``drift: adopt`` the
    checked-out branch after the daemon commits an adopted change to it; unset: committed, not pushed."""
    forge: ForgeSettings | None = None
    """Open or update one pull/merge request for the branch (needs ``remote``)."""
