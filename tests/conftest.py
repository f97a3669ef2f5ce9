from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# CI: no deadline (machines are noisy), derandomised so a failure reproduces, modest example counts.
settings.register_profile(
    "ci", deadline=None, derandomize=True, max_examples=60, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, max_examples=40)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))

pytest_plugins = ["tests.support.sandbox"]
