"""``docs/content-format.md`` lists every block type as the descriptor table (``cmssync/content/blocktypes/``) has
it: the section between the markers is generated; regenerate it with ``python -m tests.content.test_block_type_docs``.
"""

from __future__ import annotations

from pathlib import Path

from cmssync.content.blocktypes import BlockType, block_types

DOC = Path(__file__).resolve().parents[2] / "docs" / "content-format.md"
BEGIN = "<!-- block types: generated from cmssync/content/blocktypes/ by tests/content/test_block_type_docs.py -->"
END = "<!-- end of block types -->"


def _row(declared: BlockType) -> str:
    if declared.keep_reason is not None:
        written = "`keep:` placeholder"
        fields = "—"
        note = declared.keep_reason + (f"; {declared.uncreatable}" if declared.uncreatable else "")
    else:
        written = "`type:` with its fields" if declared.has_model else "`raw: true`"
        if declared.has_model:
            fields = (
                ", ".join(f"`{f.name}` ({f.kind}{'' if f.required else ', optional'})" for f in declared.fields) or "—"
            )
        else:
            fields = "every column of its read" + "".join(
                f"; `{c.name}` as a page type handle" for c in declared.columns if c.kind == "page_type"
            )
        notes = []
        if declared.edit_field:
            notes.append(f"text most often edited: `{declared.edit_field}`")
        if declared.shows_stack:
            notes.append(
                f"the API reads it as `[]`: `{declared.shows_stack}` is named from the page's rendering, and written "
                "as the stack's page id (`stID`); a display whose stack cannot be told is a `keep:` placeholder"
            )
        elif declared.derived:
            notes.append(
                "not pulled (mirrors of other columns): " + ", ".join(f"`{k}`" for k in sorted(declared.derived))
            )
        if declared.write is not None and not declared.shows_stack:
            notes.append("apply adds the keys its controller reads instead of its columns")
        if declared.dropped_when_zero:
            notes.append("never sent as `0`: " + ", ".join(f"`{k}`" for k in sorted(declared.dropped_when_zero)))
        note = "; ".join(notes) or "—"
    return f"| `{declared.handle}` | {written} | {fields} | {note} |"


def generated() -> str:
    rows = [_row(declared) for declared in block_types().values()]
    head = ["| type | pulled and written as | fields | notes |", "|---|---|---|---|"]
    return "\n".join([BEGIN, "", *head, *rows, "", END])


def _section(text: str) -> str:
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[start:end]


def test_the_block_type_list_is_generated_from_the_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert _section(text) == generated(), "docs/content-format.md: run python -m tests.content.test_block_type_docs"


if __name__ == "__main__":
    current = DOC.read_text(encoding="utf-8")
    DOC.write_text(current.replace(_section(current), generated()), encoding="utf-8")
