"""Every private name of a third-party pin library the project relies on, one section a
library, and the versions each was checked against (``CHECKED``).

Nothing else in the project reads or writes a library's underscore names: the simulator
(``hal.sim``), the adapters (``hal.gpio``) and the benches come here. An upgrade that moves
a name fails tests/hal/test_internals.py (the installed version outside its range, or the
name gone), not the firmware. Nothing here imports a library at module level: the Pi loads
only what its factory needs (tests/cli/test_startup_imports.py).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from typing import Any, TypeVar

log = logging.getLogger("hal")

# Each library's private names used below, and the versions they were read in: from the
# first (inclusive) to the last (exclusive) release, compared on the leading numbers.
CHECKED: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "gpiozero": ((2, 0), (2, 1)),  # 2.0.1
    "lgpio": ((0, 2), (0, 3)),  # 0.2.2.0 (the kernel tier)
    "pigpio": ((1, 78), (1, 79)),  # 1.78
}


def release(version: str) -> tuple[int, ...]:
    """The leading numbers of a version string: ``2.0.1.post3`` is (2, 0, 1)."""
    found = re.match(r"\d+(?:\.\d+)*", version)
    return tuple(int(n) for n in found.group().split(".")) if found else ()


def checked(library: str, version: str) -> bool:
    """Whether ``version`` of ``library`` is in the range its private names were read in."""
    low, below = CHECKED[library]
    return low <= release(version) < below


# -- gpiozero: its pins' state hooks, its mock pins, its factories' own objects --

_HOOKS: dict[type, bool] = {}
P = TypeVar("P", bound="type[Any]")


def state_is_the_hooks(cls: type) -> bool:
    """Whether ``cls.state`` is gpiozero's own ``Pin.state``, which only calls the pin's
    ``_get_state`` / ``_set_state`` (the two hooks every pin factory implements)."""
    known = _HOOKS.get(cls)
    if known is None:
        from gpiozero.pins import Pin

        prop = getattr(cls, "state", None)
        known = _HOOKS[cls] = (
            issubclass(cls, Pin) and prop is Pin.__dict__.get("state")
            and isinstance(prop, property) and prop.fget is not None and prop.fset is not None
            and prop.fget.__code__.co_names == ("_get_state",)
            and prop.fset.__code__.co_names == ("_set_state",))
    return known


def pin_hooks(pin: Any) -> tuple[Callable[[], float], Callable[[float], None]]:
    """A pin's own read and write hooks (``state_is_the_hooks`` says when they are its
    ``state``)."""
    return pin._get_state, pin._set_state


def wrap_pin_write(pin: Any, wrap: Callable[[Callable[[float], None]], Callable[..., Any]]
                   ) -> None:
    """Every later write of ``pin`` (through its device or its ``state``) goes through
    ``wrap(write)``: the benches' taps."""
    pin._set_state = wrap(pin._set_state)


def listen_to_outputs(cls: P) -> P:
    """A ``MockPin`` class whose pins call their ``output_changed()`` after each change of
    their state while they are outputs (gpiozero's ``MockPin._change_state`` and
    ``_function``)."""
    change = cls._change_state

    def _change_state(self: Any, value: Any) -> Any:
        changed = change(self, value)
        if changed and self._function == "output":
            self.output_changed()
        return changed

    cls._change_state = _change_state
    return cls


def lgpio_handle(factory: Any) -> Any:
    """The gpiochip handle gpiozero's ``LGPIOFactory`` opened (``_handle``)."""
    return factory._handle


def pigpio_connection(factory: Any) -> Any:
    """The ``pigpio.pi`` gpiozero's ``PiGPIOFactory`` connected (``_connection``)."""
    return factory._connection


def native_threads(factory: Any) -> list[object]:
    """The native factory's watch thread (``fs._thread``) and dispatch thread."""
    return [_private(getattr(factory, "fs", None), "_thread", "native"),
            _private(factory, "dispatch", "native")]


# -- lgpio: the thread its callbacks run on --

def lgpio_notify_thread() -> object:
    """lgpio's notification thread (the module's ``_notify_thread``)."""
    import lgpio

    return _private(lgpio, "_notify_thread", "lgpio")


# -- pigpio: the thread its callbacks run on --

def pigpio_notify_thread(factory: Any) -> object:
    """The notification thread (``_notify``) of the ``pigpio.pi`` gpiozero's
    ``PiGPIOFactory`` connected."""
    return _private(getattr(factory, "_connection", None), "_notify", "pigpio")


_WARNED: set[str] = set()


def _private(owner: object, attr: str, library: str) -> object:
    """A library's callback thread: one that is not found is left out, with a warning once,
    never guessed."""
    value = getattr(owner, attr, None)
    if not isinstance(value, threading.Thread) and library not in _WARNED:
        _WARNED.add(library)
        log.warning("cannot find %s's callback thread (%s): its liveness is not watched",
                    library, attr)
    return value
