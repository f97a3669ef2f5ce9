"""Who a request speaks for (:class:`Caller`), as its access token says."""

from __future__ import annotations

from dataclasses import dataclass

from cmssync.emulator.catalog import SUPER_ADMIN_ID


@dataclass(frozen=True)
class Caller:
    """Who a token speaks for: a user id, or ``None`` for the anonymous Guest of client-credentials tokens."""

    user_id: int | None
    scopes: frozenset[str]
    jti: str

    @property
    def is_super_admin(self) -> bool:
        return self.user_id == SUPER_ADMIN_ID

    @property
    def is_guest(self) -> bool:
        return self.user_id is None
