"""The HTTP client of the Concrete CMS REST API 1.0: the only code in cmssync that talks HTTP.

``ConcreteClient`` (``client``) has one typed method per endpoint; answers become the models of ``models``; failures
the errors of ``errors``; ``diagnose`` backs ``cmssync status``.
"""

from cmssync.api.client import ConcreteClient
from cmssync.api.retry import RetryPolicy
from cmssync.api.stats import RequestStats

__all__ = ["ConcreteClient", "RequestStats", "RetryPolicy"]
