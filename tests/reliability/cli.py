"""Running ``cmssync`` in-process as a user would (``cmssync.cli.main``), capturing what it prints."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from cmssync.cli import main


@dataclass(frozen=True)
class CliResult:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> CliResult:
    capsys.readouterr()
    code = main(list(args))
    captured = capsys.readouterr()
    return CliResult(code, captured.out, captured.err)
