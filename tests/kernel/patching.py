"""Replacing a named function of the firmware from test-only code (the kernel tier).

The hang harness (harness.py) and the mutants (mutants/sitecustomize.py) change the
firmware's behaviour in its own process, never through a hook in the production code:
``replace`` swaps one attribute for a wrapper, and fails loudly, naming what it looked
for, when the name is gone (a renamed method must not turn a fault into a no-op).
``when_imported`` does it as soon as a module is first imported (from sitecustomize, before
the firmware has imported anything).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any


class Missing(RuntimeError):
    """The function to replace is not where the test expected it."""


def resolve(module: str, qualname: str) -> tuple[Any, str, Any]:
    """(the owner, the attribute's name, its value) of ``module``'s ``qualname``."""
    owner: Any = importlib.import_module(module)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part, None)
        if owner is None:
            raise Missing(f"{module}.{qualname}: no {part!r} in {module}")
    if name not in vars(owner):
        raise Missing(f"{module}.{qualname}: no {name!r} on {owner!r}")
    return owner, name, vars(owner)[name]


def replace(module: str, qualname: str, make: Callable[[Any], Any]) -> Any:
    """Set ``module.qualname`` to ``make(original)``; returns the original."""
    owner, name, original = resolve(module, qualname)
    setattr(owner, name, make(original))
    return original


class _After(importlib.abc.MetaPathFinder):
    """Calls ``then(module)`` once ``name`` has been imported for the first time."""

    def __init__(self, name: str, then: Callable[[ModuleType], None]) -> None:
        self.name, self.then = name, then

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            raise Missing(f"module {fullname} not found")
        loader, then = spec.loader, self.then

        class Loader(importlib.abc.Loader):
            def create_module(self, spec: Any) -> Any:
                return loader.create_module(spec)

            def exec_module(self, module: ModuleType) -> None:
                loader.exec_module(module)
                then(module)

        spec.loader = Loader()
        return spec


def when_imported(name: str, then: Callable[[ModuleType], None]) -> None:
    """``then(module)`` right after ``name`` is imported (at once if it already is)."""
    if name in sys.modules:
        then(sys.modules[name])
    else:
        sys.meta_path.insert(0, _After(name, then))
