"""Peak memory of ``plan -o`` and ``apply PLANFILE`` against the size of the upload a plan carries (issue 37 item 7):
``python -m bench.plan_file_bench [NxMiB …]`` (default 1x16 6x18: the issue's 109 MiB of uploads, in files the
sandbox's 20 MiB ``upload_max_filesize`` takes).

For each case: a content directory with one page and N files of that many MiB of random bytes, planned with ``-o``
and the plan file applied, each as its own ``python -m cmssync`` process whose peak resident set is measured
(``bench.common.run_measured``), against ``cmssync emulator`` in a process of its own (the sandbox keeps the
uploaded bytes; they must not count). The table gives each peak, the same command's peak without the file (the
constant: interpreter, libraries, the plan) and the rest divided by the largest upload's size: the aim is at most
1.5 (before: 4.9 for ``plan -o`` and 3.2 for ``apply PLANFILE`` of all the uploads together).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from bench.common import run_measured, table
from bench.emulator_process import ADMIN_PASSWORD, SECRET, Emulator, free_port

MIB = 1 << 20


def content(root: Path, url: str, files: int, mib: int) -> None:
    (root / "pages").mkdir(parents=True)
    (root / "pages" / f"bench-{files}x{mib}.yaml").write_text(f"name: Bench {files}x{mib}\n", encoding="utf-8")
    settings = {"site": {"url": url}, "auth": {"grant": "password", "client_id": "sandbox", "username": "admin"}}
    (root / "cmssync.yaml").write_text(json.dumps(settings), encoding="utf-8")
    (root / "files").mkdir()
    for number in range(files):
        with (root / "files" / f"big-{number}.txt").open("wb") as sink:
            for _ in range(mib):
                sink.write(os.urandom(MIB))


def measure(files: int, mib: int, work: Path, emulator: Emulator) -> list[tuple[str, float]]:
    case = f"{files}x{mib}"
    root, plan = work / f"site-{case}", work / f"plan-{case}.json"
    content(root, emulator.url, files, mib)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CMSSYNC_")},
        "CMSSYNC_CLIENT_SECRET": SECRET,
        "CMSSYNC_PASSWORD": ADMIN_PASSWORD,
        "CMSSYNC_STATE": str(work / f"state-{case}" / "state.json"),
        "CMSSYNC_TOKEN_CACHE": "off",
        "XDG_CACHE_HOME": str(work / "cache"),
    }
    found = []
    for name, args in (
        ("plan -o", ["plan", str(root), "-o", str(plan)]),
        ("apply PLANFILE", ["apply", "--yes", str(root), str(plan)]),
    ):
        measured = run_measured(name, args, sandbox=None, env=env, log=work / f"{name.split()[0]}-{case}.log")
        if measured.code not in (0, 2):
            raise SystemExit(f"{name} ({case} MiB) failed:\n{measured.tail()}")
        found.append((name, measured.rss_mib))
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.plan_file_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", default=["1x16", "6x18"], help="NxMiB: N files of M MiB each")
    cases = [tuple(int(part) for part in arg.split("x")) for arg in parser.parse_args(argv).cases]
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory(prefix="cmssync-plan-file-bench-") as temp:
        work = Path(temp)
        emulator = Emulator(free_port(), work / "emulator.log", "--seed", "empty")
        try:
            base = dict(measure(0, 0, work, emulator))
            for files, mib in cases:
                for name, peak in measure(files, mib, work, emulator):
                    ratio = (peak - base[name]) / mib
                    rows.append([name, f"{files} x {mib}", f"{peak:.0f}", f"{base[name]:.0f}", f"{ratio:.2f}"])
        finally:
            emulator.close()
    headers = ["command", "uploads (files x MiB)", "peak RSS MiB", "without uploads MiB", "(peak - without) / largest"]
    print(table(headers, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
