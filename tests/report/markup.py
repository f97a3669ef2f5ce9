"""Read a rendered report back without a browser: its elements, its JSON data and its policy."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]


@dataclass
class Report:
    elements: list[Element] = field(default_factory=list)
    scripts: list[tuple[dict[str, str], str]] = field(default_factory=list)

    def find(self, tag: str, **attrs: str) -> list[Element]:
        return [e for e in self.elements if e.tag == tag and all(e.attrs.get(k) == v for k, v in attrs.items())]

    @property
    def data(self) -> Any:
        return json.loads(next(text for attrs, text in self.scripts if attrs.get("id") == "report-data"))

    @property
    def policy(self) -> str:
        meta = self.find("meta", **{"http-equiv": "Content-Security-Policy"})
        assert len(meta) == 1
        return meta[0].attrs["content"]


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.report = Report()
        self._script: dict[str, str] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.report.elements.append(Element(tag, values))
        if tag == "script":
            self._script, self._text = values, []

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._script is not None:
            self.report.scripts.append((self._script, "".join(self._text)))
            self._script = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self._text.append(data)


def read(document: str) -> Report:
    reader = _Reader()
    reader.feed(document)
    reader.close()
    return reader.report
