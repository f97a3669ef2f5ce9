"""The user kind in the content: ``users.yaml`` and/or ``users/*.yaml``, one :class:`~cmssync.content.models.UserSpec`
per entry, keyed by username; usernames and email addresses are unique on a Concrete site, compared without case."""

from __future__ import annotations

from cmssync.content.lists.kind import ListKind
from cmssync.content.models import UserSpec

KIND = ListKind(
    "user", "users", UserSpec, "username", rank=0, unique=(("username", "username"), ("email address", "email"))
)
