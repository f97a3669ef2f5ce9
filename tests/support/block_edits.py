"""Issue 25's done-when for block types, shared by the sandbox test and the opt-in real-site test.

After ``cmssync pull``: how many blocks are editable (anything but a ``keep:`` placeholder, sub-areas included),
and by type; then one text field of one block of every editable type that has one (``BlockType.edit_field``) is
edited in the pulled YAML. The block is chosen among those whose current text the public page shows (else the
first), so that the edit is expected to show too.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from cmssync.content.blocktypes import block_type
from tests.realsite.harness import page_files


@dataclass(frozen=True)
class Coverage:
    editable: Counter[str]
    kept: Counter[str]

    @property
    def share(self) -> float:
        total = sum(self.editable.values()) + sum(self.kept.values())
        return sum(self.editable.values()) / total if total else 0.0

    def without(self, types: set[str]) -> float:
        """The editable share when the types a recording proves lossy count in neither total (issue 25)."""
        kept = sum(n for t, n in self.kept.items() if t not in types)
        editable = sum(n for t, n in self.editable.items() if t not in types)
        return editable / (editable + kept) if editable + kept else 0.0

    def table(self) -> list[str]:
        kinds = sorted(set(self.editable) | set(self.kept))
        return [f"{t}: editable {self.editable[t]}, kept {self.kept[t]}" for t in kinds]


def coverage(directory: Path) -> Coverage:
    editable: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    for _, file in page_files(directory):
        data = YAML(typ="safe").load(file.read_text(encoding="utf-8")) or {}
        for blocks in (data.get("areas") or {}).values():
            for block in blocks:
                if "keep" in block:
                    kept[block["keep"]["type"]] += 1
                else:
                    editable[block["type"]] += 1
    return Coverage(editable, kept)


@dataclass(frozen=True)
class Edit:
    block_type: str
    page: str
    area: str
    field: str
    text: str


def edit_one_block_per_type(directory: Path, shown: dict[str, str], tag: str) -> list[Edit]:
    """Edit, in the YAML files, one block of every editable type with an edit field; ``shown`` is each page's
    public HTML (path → HTML), used to pick a block whose text the page shows."""
    yaml = YAML()
    yaml.width = 4096
    files = dict(page_files(directory))
    documents = {path: yaml.load(file.read_text(encoding="utf-8")) for path, file in files.items()}
    chosen: dict[str, tuple[int, str, str, dict[str, Any]]] = {}
    for path, data in documents.items():
        for area, blocks in (data.get("areas") or {}).items():
            for block in blocks:
                declared = block_type(str(block.get("type", ""))) if "keep" not in block else None
                if declared is None or declared.edit_field is None:
                    continue
                current = str((block.get("value") or {}).get(declared.edit_field) or "")
                score = 1 if current.strip() and current.strip() in shown.get(path, "") else 0
                if declared.handle not in chosen or score > chosen[declared.handle][0]:
                    chosen[declared.handle] = (score, path, area, block)
    edits = []
    for handle, (_, path, area, block) in sorted(chosen.items()):
        declared = block_type(handle)
        assert declared is not None
        assert declared.edit_field is not None
        text = f"Edited {handle} {tag}"
        value = block.setdefault("value", {})
        if declared.fields and declared.field_named("useCustomTitle") is not None:
            value["useCustomTitle"] = True  # a page title shows its text only when it is custom
        value[declared.edit_field] = f"<p>{text}</p>" if declared.kind_of(declared.edit_field) == "rich_text" else text
        edits.append(Edit(handle, path, area, declared.edit_field, text))
    for path in {e.page for e in edits}:
        with files[path].open("w", encoding="utf-8") as stream:
            yaml.dump(documents[path], stream)
    return edits
