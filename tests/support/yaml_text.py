"""YAML as ruamel itself would write it (the reference the emitter of ``cmssync.content.yaml_emit`` is held to)."""

from __future__ import annotations

import io
from typing import Any

from cmssync.content import writer


def ruamel_text(data: Any) -> str:
    buffer = io.StringIO()
    writer._yaml().dump(writer.fresh(data), buffer)
    return buffer.getvalue()
