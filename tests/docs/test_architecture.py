"""docs/ARCHITECTURE.md and the README's Layout table agree with the code and the contracts."""

from __future__ import annotations

import importlib
import inspect
import itertools
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
    "contracts"]


def diagram() -> list[tuple[str, str]]:
    """The package diagram's arrows, as (importer, imported) module names."""
    block = re.search(r"```mermaid\n(.*?)```", DOC, re.S)
    assert block is not None
    names = dict(re.findall(r'(\w+)\["([\w.]+)', block.group(1)))
    edges = re.findall(r"(\w+)(?:\[[^\]]*\])?\s*-->\s*(\w+)", block.group(1))
    return [(names[a], names[b]) for a, b in edges]


def layers() -> list[set[str]]:
    (contract,) = [c for c in CONTRACTS if c["type"] == "layers"]
    return [{m.strip() for m in layer.split("|")} for layer in contract["layers"]]


def test_every_arrow_is_allowed_by_the_contracts():
    levels = layers()

    def level(module: str) -> int | None:
        for i, layer in enumerate(levels):
            if any(module == m or module.startswith(m + ".") for m in layer):
                return i
        return None

    forbidden = [c for c in CONTRACTS if c["type"] == "forbidden"]
    for a, b in diagram():
        la, lb = level(a), level(b)
        if la is not None and lb is not None:
            assert la < lb, f"{a} --> {b} points up or sideways"
        for c in forbidden:
            if any(a == s or a.startswith(s + ".") for s in c["source_modules"]):
                assert not any(b == f or b.startswith(f + ".") for f in c["forbidden_modules"]), (
                    f"{a} --> {b} breaks {c['name']!r}")


def test_the_diagram_shows_every_layer_in_order():
    edges = set(diagram())
    levels = [sorted(layer) for layer in layers()]
    for upper, lower in itertools.pairwise(levels):
        assert any((a, b) in edges for a in upper for b in lower), (upper, lower)


# Imported for what it does to the process that imports it (the forkserver of `simulate
# --jobs N`: SIGINT ignored), so never into this one: every program a later test starts
# would inherit it, and Ctrl-C would not stop them.
ACTS_WHEN_IMPORTED = {"launcher.cli.worker"}


def _our_modules() -> list[object]:
    """Every module of ``launcher`` and ``hal``, found as files (not through sys.path), but
    those of ``ACTS_WHEN_IMPORTED``."""
    out = []
    for pkg in ("launcher", "hal"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            if name not in ACTS_WHEN_IMPORTED:
                out.append(importlib.import_module(name))
    return out


def test_every_file_and_name_the_doc_mentions_exists():
    for path in set(re.findall(r"`((?:launcher|hal)/[\w/]+\.py)`", DOC)):
        assert (ROOT / path).is_file(), path
    modules = _our_modules()
    classes = {name: obj for mod in modules
               for name, obj in inspect.getmembers(mod, inspect.isclass)
               if getattr(obj, "__module__", "").startswith(("launcher", "hal"))}
    named = set(re.findall(r"`(?:\w+\.)*([A-Z]\w+)\.(\w+)`", DOC))
    assert len(named) >= 15
    for cls, attr in named:
        assert cls in classes, cls
        assert hasattr(classes[cls], attr), f"{cls}.{attr}"


def test_the_readme_layout_names_every_package():
    rows = set(re.findall(r"^\| `(launcher/\w+)/` \|", README, re.M))
    packages = {f"launcher/{p.name}" for p in (ROOT / "launcher").iterdir()
                if (p / "__init__.py").is_file()}
    assert rows == packages
