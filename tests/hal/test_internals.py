"""Every private name of a pin library that hal/internals.py uses is still there, in an
installed version inside the range it was read in (``internals.CHECKED``): an upgrade that
moves one fails here, not in the firmware on a Pi.

gpiozero is installed wherever the tests run; its factories' own objects are read from the
real factories over the fake libraries (tests/hal/fakes), and the native factory's from
its source. lgpio's and pigpio's own names are checked where those libraries are installed
(a Pi, the kernel tier's VM) and skipped elsewhere, saying so.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import inspect
import threading
from pathlib import Path

import pytest
from gpiozero import DigitalOutputDevice
from gpiozero.pins import Pin
from gpiozero.pins.mock import MockFactory, MockPWMPin

from hal import internals
from hal.gpio import make_factory

# lgpio starts its notification thread as it is imported, for the life of the process: imported
# here, as the tests are collected, not inside the test that reads it, which the isolation
# check (tests/isolation.py) would fail for leaving that thread running. None: not installed
# (a Pi has it; the kernel tier installs it in the venv).
try:
    import lgpio
except ImportError:
    lgpio = None


def in_range(library: str) -> str:
    version = importlib.metadata.version(library)
    low, below = internals.CHECKED[library]
    assert internals.checked(library, version), (
        f"{library} {version} is outside {low}..{below} (exclusive), the versions "
        "hal/internals.py's private names were read in: read them again in this version, "
        "then widen CHECKED")
    return version


def assigned(source: str, cls: str, method: str) -> set[str]:
    """The attributes of ``self`` that ``cls.method`` assigns, in this source."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for fn in node.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == method:
                    return {t.attr for a in ast.walk(fn) if isinstance(a, ast.Assign)
                            for t in a.targets if isinstance(t, ast.Attribute)
                            and isinstance(t.value, ast.Name) and t.value.id == "self"}
    raise AssertionError(f"{cls}.{method} is gone")


def test_the_version_ranges_compare_on_the_leading_numbers():
    assert internals.release("2.0.1.post3") == (2, 0, 1)
    assert internals.checked("gpiozero", "2.0") and internals.checked("gpiozero", "2.0.1.post3")
    assert not internals.checked("gpiozero", "2.1.0") and not internals.checked("gpiozero", "1.6.2")
    assert internals.checked("pigpio", "1.78") and not internals.checked("pigpio", "1.79")


# -- gpiozero --

def test_gpiozero_is_a_version_its_private_names_were_read_in():
    in_range("gpiozero")


def test_gpiozero_pins_state_is_their_own_hooks():
    assert internals.state_is_the_hooks(MockPWMPin)
    factory = MockFactory(pin_class=MockPWMPin)
    try:
        pin = factory.pin(20)
        pin.function = "output"
        read, write = internals.pin_hooks(pin)
        write(1)
        assert read() == 1 and pin.state == 1
    finally:
        factory.reset()
    assert {"_get_state", "_set_state"} <= set(vars(Pin))


def test_a_pins_write_wrapped_is_every_write_of_it_even_through_its_device():
    factory = MockFactory(pin_class=MockPWMPin)
    try:
        device = DigitalOutputDevice(21, pin_factory=factory)
        seen: list[float] = []

        def wrap(write):
            return lambda value: (seen.append(value), write(value))[1]

        internals.wrap_pin_write(device.pin, wrap)
        device.on()
        device.off()
        assert seen == [1, 0] and device.pin.state == 0
        device.close()
    finally:
        factory.reset()


def test_mock_pins_tell_of_each_change_while_they_are_outputs_only():
    heard: list[int] = []

    @internals.listen_to_outputs
    class Listened(MockPWMPin):
        def output_changed(self) -> None:
            heard.append(self.state)

    factory = MockFactory(pin_class=Listened)
    try:
        pin = factory.pin(22)
        pin.function = "output"
        pin.state = 1
        pin.state = 1  # no change: nothing to tell
        pin.state = 0
        assert heard == [1, 0]
        pin.function = "input"
        pin.drive_high()
        assert heard == [1, 0]
    finally:
        factory.reset()


def test_gpiozeros_lgpio_factory_keeps_its_gpiochip_handle(fake_lgpio):
    factory = make_factory("lgpio")
    try:
        handle = internals.lgpio_handle(factory)
        assert isinstance(handle, int) and fake_lgpio.gpio_read(handle, 5) in (0, 1)
    finally:
        factory.close()


def test_gpiozeros_pigpio_factory_keeps_its_connection(fake_pigpio):
    factory = make_factory("pigpio")
    try:
        assert isinstance(internals.pigpio_connection(factory), fake_pigpio.pi)
    finally:
        factory.close()


def test_gpiozeros_native_factory_keeps_its_two_threads():
    spec = importlib.util.find_spec("gpiozero.pins.native")
    assert spec is not None and spec.origin is not None
    source = Path(spec.origin).read_text(encoding="utf-8")
    assert {"fs", "dispatch"} <= assigned(source, "NativeFactory", "__init__")
    assert "_thread" in assigned(source, "GPIOFS", "__init__")


# -- lgpio and pigpio, where they are installed --

def test_lgpio_is_a_version_whose_notification_thread_is_read():
    if lgpio is None:
        pytest.skip("lgpio is not installed here (a Pi has it)")
    in_range("lgpio")
    assert isinstance(internals.lgpio_notify_thread(), threading.Thread)
    assert lgpio._notify_thread is internals.lgpio_notify_thread()


def test_pigpio_is_a_version_whose_notification_thread_is_read():
    pigpio = pytest.importorskip("pigpio", reason="pigpio is not installed here (a Pi has it)")
    in_range("pigpio")
    assert "_notify" in assigned(inspect.getsource(pigpio), "pi", "__init__")
