"""Fixtures that put a fake ``lgpio`` or ``pigpio`` module under gpiozero's real factories,
and a plain MockFactory of PWM-capable pins (``factory``)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

FAKES = Path(__file__).parent / "fakes"
PI5_REVISION = 0xD04170  # Raspberry Pi 5 Model B rev 1.0, 8 GB (new-style code, type 0x17)
PI4_REVISION = 0xC03114  # Raspberry Pi 4 Model B rev 1.4, 4 GB (type 0x11)


def load_fake(name: str) -> ModuleType:
    """A fresh copy of ``fakes/fake_<name>.py`` under the module name ``name``."""
    spec = importlib.util.spec_from_file_location(name, FAKES / f"fake_{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the class is made.
    previous = sys.modules.get(name)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        if previous is None:
            del sys.modules[name]
        else:
            sys.modules[name] = previous
    return module


def _install(monkeypatch: pytest.MonkeyPatch, name: str, module: ModuleType | None) -> None:
    monkeypatch.setitem(sys.modules, name, module)
    # gpiozero's adapter binds the library at its own import: import it again over the fake.
    monkeypatch.delitem(sys.modules, f"gpiozero.pins.{name}", raising=False)


@pytest.fixture
def fake_lgpio(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """A Pi 5: the fake ``lgpio`` (one gpiochip, 54 lines) under gpiozero's LGPIOFactory.

    gpiozero reads the board revision from /proc (a file of this machine, not the library):
    that one function is replaced by the Pi 5's revision code.
    """
    from gpiozero.pins import local

    module = load_fake("lgpio")
    _install(monkeypatch, "lgpio", module)
    monkeypatch.setattr(local, "get_pi_revision", lambda: PI5_REVISION)
    yield module
    module.shutdown()
    # A test that failed half-way may leave pins in gpiozero's class-wide table.
    local.LocalPiFactory.pins.clear()
    local.LocalPiFactory._reservations.clear()


@pytest.fixture
def fake_pigpio(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """A Pi 4 with pigpiod running: the fake ``pigpio`` under gpiozero's PiGPIOFactory."""
    module = load_fake("pigpio")
    _install(monkeypatch, "pigpio", module)
    yield module
    module.DAEMON.answer()  # a client left blocked on a hung daemon carries on and ends
    for conn in list(module._connections):
        conn.stop()


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    """gpiozero's MockFactory with PWM-capable pins, reset after the test."""
    f = MockFactory(pin_class=MockPWMPin)
    yield f
    f.reset()
