"""Benchmark: ``load_content`` on a generated site, without a parse cache, with a cold one and with a warm one,
against parsing the same files with ruamel.yaml's round-trip parser and with the C fast path.

    python -m bench.content_bench [--pages 1000] [--blocks 5] [--repeat 3]

Generates a content directory (pages in a two-level tree, each with attributes and BLOCKS blocks, plus a few
files, users and groups) in a temporary directory, then reports the best of REPEAT runs of each measurement: wall
time and the process's CPU time (steadier on a shared machine). "Cold" starts from an empty parse cache (every file
parsed and validated, then the cache written); "warm" is a new process's view of a full one (the cache file read,
no file parsed). The targets (issue 17): warm <= 0.3 s, cold <= 1.5 s.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ruamel.yaml import YAML

from cmssync.content.loader import load_content
from cmssync.content.yamlsource import ParseCache
from cmssync.yamlread import fast, parse_located


def generate(root: Path, pages: int, blocks: int) -> list[Path]:
    """Write the site; returns every YAML file written."""
    written: list[Path] = []
    sections = max(1, pages // 50)
    (root / "files" / "images").mkdir(parents=True)
    for index in range(10):
        (root / "files" / "images" / f"image-{index}.png").write_bytes(bytes([index]) * 2048)
    for index in range(pages):
        if index < sections:
            path = root / "pages" / f"section-{index}.yaml"
        else:
            path = root / "pages" / f"section-{index % sections}" / f"page-{index}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page_text(index, blocks), encoding="utf-8")
        written.append(path)
    users = root / "users.yaml"
    users.write_text(
        "".join(
            f"- username: user{n}\n  email: user{n}@example.com\n  password: ${{env:USER{n}_PASSWORD}}\n"
            for n in range(20)
        ),
        encoding="utf-8",
    )
    groups = root / "groups.yaml"
    groups.write_text("".join(f"- name: Group {n}\n" for n in range(10)), encoding="utf-8")
    return [*written, users, groups]


def page_text(index: int, blocks: int) -> str:
    lines = [
        f"name: Page {index}",
        f"description: Generated page number {index} for the benchmark.",
        "type: page",
        "template: full",
        "attributes:",
        f"  meta_title: Page {index} | Benchmark",
        "  exclude_nav: false",
        "  tags: [bench, generated]",
        "areas:",
        "  Main:",
    ]
    kinds = ("content", "html", "page_title", "content", "horizontal_rule")
    for number in range(blocks):
        kind = kinds[number % len(kinds)]
        lines.append(f"    - type: {kind}")
        if kind in ("content", "html"):
            lines += [
                "      value:",
                "        content: |",
                f"          <h2>Section {number}</h2>",
                f"          <p>Text of block {number} on page {index}.",
                f'          <img src="${{file:images/image-{number % 10}.png}}"></p>',
            ]
        elif kind == "page_title":
            lines.append(f"      value: {{useCustomTitle: true, titleText: Title {index}}}")
    return "\n".join(lines) + "\n"


def best_of(repeat: int, *actions: Callable[[], object]) -> list[tuple[float, float]]:
    """Best (wall, CPU) time of each action over ``repeat`` rounds, run interleaved so that drift hits all alike."""
    times: list[list[tuple[float, float]]] = [[] for _ in actions]
    for _ in range(repeat):
        for index, action in enumerate(actions):
            wall, cpu = time.perf_counter(), time.process_time()
            action()
            times[index].append((time.perf_counter() - wall, time.process_time() - cpu))
    return [(min(w for w, _ in t), min(c for _, c in t)) for t in times]


def parse_only(files: list[Path]) -> None:
    yaml = YAML(typ="rt")
    for path in files:
        yaml.load(path.read_text(encoding="utf-8"))


def parse_fast(files: list[Path]) -> None:
    for path in files:
        parse_located(path.read_text(encoding="utf-8"), path.name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        files = generate(root, options.pages, options.blocks)
        size = sum(p.stat().st_size for p in files)
        content = load_content(root)
        cache = root.parent / f"{root.name}-hashes.json"
        load_content(root, hash_cache=cache)
        parsed = root.parent / f"{root.name}-parsed"

        def cold() -> None:  # an empty parse cache: every file parsed, then the cache written
            shutil.rmtree(parsed, ignore_errors=True)
            load_content(root, hash_cache=cache, parse_cache=ParseCache(directory=parsed))

        def warm() -> None:  # a new process's view: the cache file read from disk, nothing parsed
            load_content(root, hash_cache=cache, parse_cache=ParseCache(directory=parsed))

        parse, fast_parse, load, cached, cold_time, warm_time = best_of(
            options.repeat,
            lambda: parse_only(files),
            lambda: parse_fast(files),
            lambda: load_content(root),
            lambda: load_content(root, hash_cache=cache),
            cold,
            warm,
        )
        cache.unlink(missing_ok=True)
        shutil.rmtree(parsed, ignore_errors=True)
    rows = [
        ("site", f"{options.pages} pages x {options.blocks} blocks, {len(files)} YAML files, {size / 1024:.0f} KiB"),
        ("loaded", content.summary()),
        ("C parser (ruamel.yaml.clib)", "installed" if fast.AVAILABLE else "NOT installed: files parsed round-trip"),
        ("ruamel.yaml rt parse only", _times(parse)),
        ("fast path parse only (parse_located)", _times(fast_parse)),
        ("load_content, no parse cache", _times(load)),
        ("load_content, no parse cache, warm hash cache", _times(cached)),
        ("load_content, cold parse cache (target <= 1.5 s)", _times(cold_time)),
        ("load_content, warm parse cache (target <= 0.3 s)", _times(warm_time)),
        ("per page (no parse cache, CPU)", f"{load[1] / options.pages * 1000:.2f} ms"),
        ("per page (warm parse cache, CPU)", f"{warm_time[1] / options.pages * 1000:.3f} ms"),
    ]
    width = max(len(label) for label, _ in rows)
    print(f"{'measurement':<{width}}  result (best of {options.repeat}: wall / process CPU)")
    print(f"{'-' * width}  {'-' * 40}")
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    return 0


def _times(times: tuple[float, float]) -> str:
    wall, cpu = times
    return f"{wall:.3f} s wall / {cpu:.3f} s CPU"


if __name__ == "__main__":
    sys.exit(main())
