"""The import rules of design.md §2, checked from the source with ``ast`` (no import side effects).

Layers, highest first: ``cli`` → ``daemon`` → ``sync`` → ``content`` → ``api`` → base (``config``, ``errors``,
``logs``). A module may import its own layer and layers below it. ``emulator`` stands apart: it imports nothing of
cmssync outside itself, so a client bug can never be mirrored by an emulator bug. The pure sync modules
(``sync.planner``, ``sync.report``, ``sync.blocks``, ``sync.normalize``) do not import ``api``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

LAYERS = ["cli", "daemon", "sync", "content", "api", "base"]
BASE_MODULES = {"config", "errors", "fileio", "logs", "__init__"}
FACE_MODULES = {"cli", "__main__"}
PURE_SYNC = {"sync.planner", "sync.report", "sync.blocks", "sync.normalize"}


@dataclass(frozen=True)
class Violation:
    module: str
    line: int
    imported: str
    rule: str

    def __str__(self) -> str:
        return f"cmssync/{self.module.replace('.', '/')}.py:{self.line}: imports {self.imported}: {self.rule}"


def layer_of(module: str) -> str:
    """``sync.plan`` → ``sync``; ``config`` → ``base``; ``cli`` → ``cli``; ``emulator.app`` → ``emulator``."""
    top = module.split(".")[0]
    if top in BASE_MODULES:
        return "base"
    if top in FACE_MODULES:
        return "cli"
    return top


def imports_of(path: Path, module: str) -> list[tuple[int, str]]:
    """Every ``cmssync.*`` module imported by a file, with absolute names (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module.split(".")[:-1] if path.name != "__init__.py" else module.split(".")
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.startswith("cmssync")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                name = ".".join(["cmssync", *base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            if name == "cmssync":
                # ``from cmssync import errors`` imports the submodule ``cmssync.errors``.
                # (Dunder names such as ``__version__`` are attributes of the package root, a base module.)
                found += [
                    (node.lineno, f"cmssync.{alias.name}") for alias in node.names if not alias.name.startswith("__")
                ]
            elif name.startswith("cmssync"):
                found.append((node.lineno, name))
    return found


def check_tree(root: Path) -> list[Violation]:
    """All violations under a ``cmssync`` package directory."""
    violations: list[Violation] = []
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        if module.endswith(".__init__"):
            module = module[: -len(".__init__")]
        importer = layer_of(module)
        for line, imported in imports_of(path, module):
            target_module = imported.removeprefix("cmssync").lstrip(".")
            if not target_module:
                continue
            target = layer_of(target_module)
            rule = _broken_rule(module, importer, target_module, target)
            if rule:
                violations.append(Violation(module, line, imported, rule))
    return violations


def _broken_rule(module: str, importer: str, target_module: str, target: str) -> str | None:
    if importer == "emulator":
        if target != "emulator":
            return "the emulator imports nothing of cmssync outside cmssync.emulator"
        return None
    if target == "emulator":
        if importer == "cli":
            return None
        return "only the CLI may start the embedded emulator"
    if importer not in LAYERS or target not in LAYERS:
        return f"unknown layer ({importer} → {target}); add it to tests/layering.py"
    if LAYERS.index(target) < LAYERS.index(importer):
        return f"layer {importer} may not import the higher layer {target}"
    if any(module == p or module.startswith(p + ".") for p in PURE_SYNC) and target == "api":
        return "the planner, report, blocks and normalize modules are pure and never import the API client"
    return None
