"""Files written into a directory from a mapping of relative names to text (UTF-8) or bytes."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def write_files(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write each of ``files`` below ``root`` (folders made as needed); ``root``."""
    for name, body in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body, encoding="utf-8")
    return root
