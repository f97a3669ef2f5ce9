"""The emulator's options (one object shared by the CLI entry point, the embedding API and the app)."""

from __future__ import annotations

from dataclasses import dataclass, field

DIALECTS = ("concrete", "documented")
CONCRETE_PREFIX = "/ccm/api/1.0"
DOCUMENTED_PREFIX = "/cms/api/1.0"


@dataclass
class Settings:
    """Everything that shapes one emulator instance."""

    #: Path of the SQLite database; ``None`` uses a temporary file removed on shutdown.
    db: str | None = None
    #: ``default``, ``empty`` or the path of a JSON/YAML seed file.
    seed: str = "default"
    #: ``pages=N,blocks=N,files=N,users=N``: a generated site on top of the seed.
    generate: str | None = None
    #: ``concrete`` (what a real 9.3 site does) or ``documented`` (what the API documentation says).
    dialect: str = "concrete"
    #: Latency added to every API request, in milliseconds.
    latency_ms: int = 0
    #: Capacity model (``cmssync.emulator.capacity``): API requests share this many workers (0: unlimited) ...
    workers: int = 0
    #: ... and each holds its worker this many milliseconds.
    service_ms: int = 0
    #: Fault rules (``KIND:PROBABILITY[:key=value…]``), active from the start.
    faults: list[str] = field(default_factory=list)
    #: Seed of the fault random generator, so a fault run can be repeated.
    fault_seed: int | None = None
    client_id: str = "sandbox"
    client_secret: str = "sandbox-secret"
    admin_username: str = "admin"
    admin_password: str = "sandbox-admin"
    #: Lifetime of access tokens in seconds (the real server: 3600).
    token_ttl: int = 3600
    #: Whether the password grant is enabled (off by default on a real site, on in the sandbox).
    password_grant: bool = True

    def __post_init__(self) -> None:
        if self.dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {self.dialect!r} (expected one of {', '.join(DIALECTS)})")
        if self.token_ttl <= 0:
            raise ValueError("token_ttl must be positive")
        if self.latency_ms < 0:
            raise ValueError("latency_ms must not be negative")
        if self.workers < 0 or self.service_ms < 0:
            raise ValueError("workers and service_ms must not be negative")
