from __future__ import annotations

import tests.conftest as root_conftest

# Until tests/conftest.py registers the plugin (pytest_plugins = ["tests.fixtures.sandbox"]), import its fixtures
# here so the emulator tests run on their own; once registered, the plugin's fixtures are used as they are.
if "tests.fixtures.sandbox" not in getattr(root_conftest, "pytest_plugins", []):
    from tests.fixtures.sandbox import sandbox, sandbox_any_dialect, sandbox_server  # noqa: F401
