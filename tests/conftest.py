from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis import HealthCheck, settings

# CI: no deadline (machines are noisy), derandomised so a failure reproduces, modest example counts. A test sets
# max_examples only below the profile's (the whole suite must stay under 10 minutes on two cores).
settings.register_profile(
    "ci", deadline=None, derandomize=True, max_examples=60, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, max_examples=40)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# The access-token cache between processes (auth.token_cache, default on: ~/.cache/cmssync) would make request counts
# depend on which test ran before, and write into the user's home: off for commands run by tests (the variable), and
# no per-user directory for settings built in-process (the fixture). Tests of the cache give it their own directory.
os.environ["CMSSYNC_TOKEN_CACHE"] = "off"
# The per-user cache (parse and file-hash caches, cmssync/usercache.py) of commands run by tests: a directory of the
# test session's own, never the user's home.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="cmssync-tests-cache-")

pytest_plugins = ["tests.support.sandbox", "tests.support.postgres"]


@pytest.fixture(autouse=True)
def _no_per_user_token_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cmssync.api.token_cache.default_cache_dir", lambda places=(): None)
