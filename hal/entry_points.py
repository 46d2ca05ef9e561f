"""Import gpiozero without importing ``importlib.metadata`` with it.

``gpiozero.devices`` and ``gpiozero.pins.mock`` bind ``entry_points`` when they are
imported, to look a pin factory (or a mock pin class) up by its name later. The launcher
never asks them to: it builds its pin factory itself (``hal.gpio.make_factory``). Yet the
binding imports ``importlib.metadata`` and, through it, the ``email`` package: more CPU
than any module of the launcher's own, on every start of the service (``python -m
bench.startup`` lists the imports of ``launcher run``).

Inside ``deferred_entry_points()`` the module gpiozero tries first, ``importlib_metadata``
(the backport), is a stand-in whose ``entry_points`` imports the standard library's on its
first call and hands the call on: gpiozero's own look-ups by name work as before. Where
the real backport is installed it is left alone, and gpiozero uses it as it would.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import types
from collections.abc import Iterator
from typing import Any

BACKPORT = "importlib_metadata"


def entry_points(**params: Any) -> Any:
    """``importlib.metadata.entry_points``, imported when first called."""
    from importlib.metadata import entry_points as real

    return real(**params)


@contextlib.contextmanager
def deferred_entry_points() -> Iterator[None]:
    """While inside, an import of gpiozero binds ``entry_points`` above (see the module)."""
    if BACKPORT in sys.modules or importlib.util.find_spec(BACKPORT) is not None:
        yield
        return
    stand_in = types.ModuleType(BACKPORT, "entry_points only, imported when first called "
                                          "(hal/entry_points.py)")
    stand_in.entry_points = entry_points  # type: ignore[attr-defined]
    sys.modules[BACKPORT] = stand_in
    try:
        yield
    finally:
        # Gone once gpiozero has bound the function: nothing else ever sees the stand-in.
        if sys.modules.get(BACKPORT) is stand_in:
            del sys.modules[BACKPORT]
