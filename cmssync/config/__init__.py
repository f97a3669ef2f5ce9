"""Settings: ``cmssync.yaml`` + container secrets + environment, in rising precedence.

The file holds connection and policy; secrets come from the environment (``CMSSYNC_*``) or from files in
``/run/secrets`` (Docker and Kubernetes secrets), or from ``${env:NAME}`` references inside the file. A secret
written literally in ``cmssync.yaml`` is refused: the file lives in git. Secrets are held as ``SecretStr`` so they
print as ``**********`` wherever a settings object ends up (logs, reprs, tracebacks).

Problems in the file are reported as ``cmssync.yaml:line:col: message``, all at once.

The model (every section and field) is in :mod:`cmssync.config.model` (value types in ``values``, the daemon
and state sections in ``daemon`` and ``state``), the loading in
:mod:`cmssync.config.loading`; this package's names are the ones the rest of cmssync uses.
"""

from cmssync.config.daemon import DaemonSettings, NotifySettings
from cmssync.config.loading import (
    CONFIG_VARIABLE,
    ENV_VARIABLE,
    FLAT_ENVIRONMENT,
    SITE_VARIABLE,
    config_file,
    load_settings,
)
from cmssync.config.model import (
    AuthSettings,
    ConflictPolicy,
    ConflictRule,
    ConflictSettings,
    DriftPolicy,
    DriftRule,
    DriftSettings,
    ForeignDraftPolicy,
    GlobalIgnoreRule,
    IgnoreRule,
    Settings,
    SiteSettings,
)
from cmssync.config.proposals import DEFAULT_PROPOSAL_BRANCH, ForgeSettings, ProposalSettings
from cmssync.config.state import StateSettings
from cmssync.config.values import (
    AUTO_MAX_CONCURRENCY,
    CONFIG_FILE,
    DEFAULT_API_PREFIX,
    DEFAULT_SECRETS_DIR,
    folder_path,
    parse_duration,
)

__all__ = [
    "AUTO_MAX_CONCURRENCY",
    "CONFIG_FILE",
    "CONFIG_VARIABLE",
    "DEFAULT_API_PREFIX",
    "DEFAULT_PROPOSAL_BRANCH",
    "DEFAULT_SECRETS_DIR",
    "ENV_VARIABLE",
    "FLAT_ENVIRONMENT",
    "SITE_VARIABLE",
    "AuthSettings",
    "ConflictPolicy",
    "ConflictRule",
    "ConflictSettings",
    "DaemonSettings",
    "DriftPolicy",
    "DriftRule",
    "DriftSettings",
    "ForeignDraftPolicy",
    "ForgeSettings",
    "GlobalIgnoreRule",
    "IgnoreRule",
    "NotifySettings",
    "ProposalSettings",
    "Settings",
    "SiteSettings",
    "StateSettings",
    "config_file",
    "folder_path",
    "load_settings",
    "parse_duration",
]
