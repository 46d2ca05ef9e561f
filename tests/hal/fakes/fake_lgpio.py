"""A fake of the ``lgpio`` Python module (the lg library, Pi 5 and newer OS images).

Written from the library's documented API (its module docstrings and the lg C sources'
behaviour as documented there), covering what gpiozero's ``LGPIOFactory`` calls:
``gpiochip_open/_close``, ``gpio_get_mode``, ``gpio_claim_input/_output/_alert``,
``gpio_free``, ``gpio_read/_write``, ``tx_pwm``, ``gpio_set_debounce_micros``,
``callback`` and ``error``. One module object models one machine with one gpiochip;
``tests/hal/conftest.py`` loads a fresh copy for each test and puts it in ``sys.modules``.

Test verbs live on ``CHIP`` (a ``Chip``): ``drive(gpio, level)`` is the outside world
pulling a line, ``float(gpio)`` lets it go, ``level(gpio)`` reads what the pin does,
``settle()`` waits until the notification thread has delivered every edge.

Where this fake knowingly differs from the real library (and why that is acceptable) is
listed in ``tests/hal/test_real_factories.py``, ``FAKE_DIFFERENCES``.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# -- documented constants ---------------------------------------------------------------
SET_ACTIVE_LOW = 4
SET_OPEN_DRAIN = 8
SET_OPEN_SOURCE = 16
SET_PULL_UP = 32
SET_PULL_DOWN = 64
SET_PULL_NONE = 128
RISING_EDGE = 1
FALLING_EDGE = 2
BOTH_EDGES = 3
TIMEOUT = 2

OKAY = 0
BAD_HANDLE = -5
BAD_EVENT_REQUEST = -72
BAD_GPIO_NUMBER = -73
CANNOT_OPEN_CHIP = -78
GPIO_BUSY = -79
GPIO_NOT_ALLOCATED = -80
BAD_DEBOUNCE_MICS = -98
BAD_PWM_FREQ = -102
BAD_PWM_DUTY = -103
GPIO_NOT_AN_OUTPUT = -104

_TEXT = {
    BAD_HANDLE: "unknown handle",
    BAD_EVENT_REQUEST: "bad event request",
    BAD_GPIO_NUMBER: "bad GPIO number",
    CANNOT_OPEN_CHIP: "can not open gpiochip",
    GPIO_BUSY: "GPIO busy",
    GPIO_NOT_ALLOCATED: "GPIO not allocated",
    BAD_DEBOUNCE_MICS: "bad debounce microseconds",
    BAD_PWM_FREQ: "bad PWM frequency",
    BAD_PWM_DUTY: "bad PWM dutycycle",
    GPIO_NOT_AN_OUTPUT: "GPIO not set as an output",
}

# gpio_get_mode bits (documented table): kernel flags low, the lg library's own << 8.
_K_USED, _K_OUTPUT, _K_INPUT = 1, 2, 1 << 16
_K_RISING, _K_FALLING = 1 << 17, 1 << 18
_LG_INPUT, _LG_OUTPUT, _LG_ALERT = 1 << 8, 1 << 9, 1 << 10
_LINE_FLAGS = (SET_ACTIVE_LOW | SET_OPEN_DRAIN | SET_OPEN_SOURCE | SET_PULL_UP | SET_PULL_DOWN
               | SET_PULL_NONE)
_BIAS = SET_PULL_UP | SET_PULL_DOWN | SET_PULL_NONE
_MAX_DEBOUNCE_US = 5_000_000

exceptions = True


class error(Exception):
    """What the library raises for a negative status: its value is the error's text."""

    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return repr(self.value)  # the real module shows the text quoted, like this


def error_text(errnum: int) -> str:
    return _TEXT.get(errnum, f"error {errnum}")


def _check(status: int) -> int:
    if status < 0 and exceptions:
        raise error(error_text(status))
    return status


@dataclass
class Line:
    """One line of the chip: who holds it, how, and what the outside world does to it."""

    claimed_by: int | None = None  # handle
    use: str = "free"  # free, input, output, alert
    flags: int = 0  # line flags as last requested (active low, drive, bias)
    bias: int = SET_PULL_NONE  # the kernel keeps the bias a claim asked for ("as is" if none)
    latch: int = 0  # last level written while an output
    pwm: tuple[float, float] | None = None  # (frequency Hz, duty %) while tx_pwm runs
    edges: int = 0  # alert edge flags
    debounce_us: int = 0
    driven: int | None = None  # level the outside world forces on the pin; None: floating
    reported: int = 0  # last level an alert was generated for
    held: bool = False  # released while an output: still drives its latch (no claim holds it)


@dataclass
class Chip:
    """The gpiochip and the outside world around it, with verbs for tests."""

    number: int = 0
    lines: list[Line] = field(default_factory=lambda: [Line() for _ in range(54)])
    present: bool = True  # False: /dev/gpiochipN does not exist
    permitted: bool = True  # False: the user may not open it (not in the gpio group)
    handles: set[int] = field(default_factory=set)
    log: list[tuple[int, str, Any]] = field(default_factory=list)  # (gpio, what, value)
    now_ns: int = 1_000_000_000
    errors: list[BaseException] = field(default_factory=list)  # raised inside callbacks
    # The real library's race (lgGpio.c, xSetAsFree): re-claiming an alert line closes its
    # request's fd while the alert thread may still be in ppoll on it (it waits 10 x 200 us
    # for that thread), and the kernel lets the line go only when that ppoll returns: the
    # claim that follows is refused "GPIO busy", and the line is left free. True: it does.
    late_alert_release: bool = False

    # -- what a pin does, electrically --

    def level(self, gpio: int) -> float:
        """The pin's level: 0/1, or the duty (0..1) while software PWM runs on it."""
        line = self.lines[gpio]
        if line.use == "output" and line.pwm is not None:
            return line.pwm[1] / 100
        if line.use == "output" or (line.held and line.driven is None):
            return line.latch
        if line.driven is not None:
            return line.driven
        return 1 if line.bias == SET_PULL_UP else 0  # floating reads low here

    # -- the outside world --

    def drive(self, gpio: int, level: int) -> None:
        """Something outside pulls the pin to ``level`` (a switch, a sensor)."""
        with _lock:
            self.lines[gpio].driven = int(bool(level))
            self._edge(gpio)

    def float(self, gpio: int) -> None:
        """The outside lets go of the pin: its bias decides the level."""
        with _lock:
            self.lines[gpio].driven = None
            self._edge(gpio)

    def settle(self) -> None:
        """Wait until the notification thread has delivered every queued edge."""
        _events.join()
        if self.errors:
            raise self.errors[0]

    def _edge(self, gpio: int) -> None:
        line = self.lines[gpio]
        if line.use != "alert":
            return
        level = int(self.level(gpio))
        if line.flags & SET_ACTIVE_LOW:
            level ^= 1
        if level == line.reported:
            return
        line.reported = level
        wanted = RISING_EDGE if level else FALLING_EDGE
        if line.edges & wanted:
            self.now_ns += 1_000_000  # 1 ms between edges: timestamps only ever increase
            _events.put((self.now_ns, self.number, gpio, level))


CHIP = Chip()
_lock = threading.RLock()
_handles_made = 0
_events: queue.Queue[tuple[int, int, int, int] | None] = queue.Queue()


# -- the notification thread: the real module starts one at import -----------------------

class _Callback:
    """What ``callback()`` returns: cancel it to stop the calls."""

    def __init__(self, chip: int, gpio: int, edge: int,
                 func: Callable[[int, int, int, int], None] | None) -> None:
        self.chip, self.gpio, self.edge = chip, gpio, edge
        self.count = 0
        self.func = func if func is not None else self._tally

    def _tally(self, chip: int, gpio: int, level: int, tick: int) -> None:
        self.count += 1

    def tally(self) -> int:
        return self.count

    def reset_tally(self) -> None:
        self.count = 0

    def cancel(self) -> None:
        with _lock:
            if self in _callbacks:
                _callbacks.remove(self)


_callbacks: list[_Callback] = []


def _notify_loop() -> None:
    while True:
        event = _events.get()
        try:
            if event is None:
                return
            tick, chip, gpio, level = event
            with _lock:
                targets = [cb for cb in _callbacks if cb.chip == chip and cb.gpio == gpio]
            for cb in targets:
                try:
                    cb.func(chip, gpio, level, tick)
                except Exception as exc:  # the test sees it at settle()
                    CHIP.errors.append(exc)
        finally:
            _events.task_done()


_thread = threading.Thread(target=_notify_loop, name="fake-lgpio-notify", daemon=True)
_thread.start()
_notify_thread = _thread  # the real module's name for its notification thread


def shutdown() -> None:
    """Stop the notification thread (the real one lives until the process ends)."""
    _events.put(None)
    _thread.join(timeout=5)


# -- the API ------------------------------------------------------------------------------

def gpiochip_open(gpiochip: int) -> int:
    global _handles_made
    with _lock:
        if gpiochip != CHIP.number or not CHIP.present or not CHIP.permitted:
            return _check(CANNOT_OPEN_CHIP)
        _handles_made += 1
        handle = (gpiochip << 16) | _handles_made
        CHIP.handles.add(handle & 0xFFFF)
        return handle


def gpiochip_close(handle: int) -> int:
    with _lock:
        h = _handle(handle)
        for gpio in range(len(CHIP.lines)):
            if CHIP.lines[gpio].claimed_by == h:
                _release(gpio)
        CHIP.handles.discard(h)
        return OKAY


def gpio_get_mode(handle: int, gpio: int) -> int:
    with _lock:
        line = _line(handle, gpio)
        mode = line.bias | (line.flags & (SET_ACTIVE_LOW | SET_OPEN_DRAIN | SET_OPEN_SOURCE))
        if line.claimed_by is not None:
            mode |= _K_USED
        mode |= _K_OUTPUT if line.use == "output" else _K_INPUT
        if line.use == "alert":
            mode |= (_K_RISING if line.edges & RISING_EDGE else 0)
            mode |= (_K_FALLING if line.edges & FALLING_EDGE else 0)
        if line.claimed_by == _handle(handle):  # the lg bits only for the owner
            mode |= {"input": _LG_INPUT, "output": _LG_OUTPUT, "alert": _LG_ALERT}.get(
                line.use, 0)
        return mode


def gpio_claim_input(handle: int, gpio: int, lFlags: int = 0) -> int:
    with _lock:
        line = _claimable(handle, gpio)
        if line.use == "input":
            return OKAY  # already an input of this handle: nothing changes, flags included
        if line.use == "alert" and CHIP.late_alert_release:
            _release(gpio)
            return _check(GPIO_BUSY)
        _claim(line, _handle(handle), "input", lFlags)
        CHIP.log.append((gpio, "claim_input", lFlags))
        return OKAY


def gpio_claim_output(handle: int, gpio: int, level: int = 0, lFlags: int = 0) -> int:
    with _lock:
        line = _claimable(handle, gpio)
        if line.use == "output":
            return OKAY  # already an output of this handle: the level is left as it is
        _claim(line, _handle(handle), "output", lFlags)
        line.latch = int(bool(level))
        CHIP.log.append((gpio, "claim_output", line.latch))
        return OKAY


def gpio_claim_alert(handle: int, gpio: int, eFlags: int, lFlags: int = 0,
                     notify_handle: int | None = None) -> int:
    with _lock:
        if eFlags not in (RISING_EDGE, FALLING_EDGE, BOTH_EDGES):
            return _check(BAD_EVENT_REQUEST)
        line = _claimable(handle, gpio)
        _claim(line, _handle(handle), "alert", lFlags)
        line.edges = eFlags
        level = int(CHIP.level(gpio))
        line.reported = level ^ 1 if line.flags & SET_ACTIVE_LOW else level
        CHIP.log.append((gpio, "claim_alert", (eFlags, lFlags)))
        return OKAY


def gpio_free(handle: int, gpio: int) -> int:
    with _lock:
        line = _line(handle, gpio)
        if line.claimed_by != _handle(handle):
            return _check(GPIO_NOT_ALLOCATED)
        _release(gpio)
        return OKAY


def gpio_read(handle: int, gpio: int) -> int:
    with _lock:
        line = _line(handle, gpio)
        if line.claimed_by is None:
            gpio_claim_input(handle, gpio)  # the library claims a free line as an input
        elif line.claimed_by != _handle(handle):
            return _check(GPIO_BUSY)
        if line.use == "output":
            return line.latch  # documented: an output reads back what was last written
        level = int(CHIP.level(gpio))
        return level ^ 1 if line.flags & SET_ACTIVE_LOW else level


def gpio_write(handle: int, gpio: int, level: int) -> int:
    with _lock:
        line = _line(handle, gpio)
        if line.claimed_by not in (None, _handle(handle)):
            return _check(GPIO_BUSY)
        if line.use != "output":
            # The library turns a lone input into an output rather than refusing.
            _claim(line, _handle(handle), "output", line.flags)
        line.latch = int(bool(level))
        CHIP.log.append((gpio, "write", line.latch))
        return OKAY


def tx_pwm(handle: int, gpio: int, pwm_frequency: float, pwm_duty_cycle: float,
           pulse_offset: int = 0, pulse_cycles: int = 0) -> int:
    with _lock:
        line = _line(handle, gpio)
        if pwm_frequency == 0:
            if line.pwm is not None:
                # Stopped at the end of a cycle: high only if the duty kept it high all along.
                line.latch = 1 if line.pwm[1] >= 100 else 0
            line.pwm = None
            CHIP.log.append((gpio, "pwm", None))
            return OKAY
        if not 0.1 <= pwm_frequency <= 10_000:
            return _check(BAD_PWM_FREQ)
        if not 0 <= pwm_duty_cycle <= 100:
            return _check(BAD_PWM_DUTY)
        if line.claimed_by not in (None, _handle(handle)):
            return _check(GPIO_BUSY)
        if line.use != "output":
            _claim(line, _handle(handle), "output", line.flags)
        line.pwm = (float(pwm_frequency), float(pwm_duty_cycle))
        CHIP.log.append((gpio, "pwm", line.pwm))
        return 9  # room left in the PWM queue


def gpio_set_debounce_micros(handle: int, gpio: int, debounce_micros: int) -> int:
    with _lock:
        if not 0 <= debounce_micros <= _MAX_DEBOUNCE_US:
            return _check(BAD_DEBOUNCE_MICS)
        _line(handle, gpio).debounce_us = int(debounce_micros)
        return OKAY


def callback(handle: int, gpio: int, edge: int = RISING_EDGE,
             func: Callable[[int, int, int, int], None] | None = None) -> _Callback:
    cb = _Callback(handle >> 16, gpio, edge, func)
    with _lock:
        _callbacks.append(cb)
    return cb


# -- helpers ------------------------------------------------------------------------------

def _handle(handle: int) -> int:
    h = handle & 0xFFFF
    if h not in CHIP.handles:
        _check(BAD_HANDLE)
    return h


def _line(handle: int, gpio: int) -> Line:
    _handle(handle)
    if not 0 <= gpio < len(CHIP.lines):
        _check(BAD_GPIO_NUMBER)
    return CHIP.lines[gpio]


def _claimable(handle: int, gpio: int) -> Line:
    """The line, if this handle may claim it: the kernel refuses a line held elsewhere."""
    line = _line(handle, gpio)
    if line.claimed_by not in (None, _handle(handle)):
        _check(GPIO_BUSY)
    return line


def _claim(line: Line, handle: int, use: str, flags: int) -> None:
    line.pwm = None  # freeing the line first stops any PWM running on it
    line.claimed_by, line.use, line.held = handle, use, False
    line.flags = flags & _LINE_FLAGS
    if flags & _BIAS:
        line.bias = flags & _BIAS
    line.edges = 0


def _release(gpio: int) -> None:
    line = CHIP.lines[gpio]
    if line.use == "output" and line.pwm is not None:
        line.latch = 1 if line.pwm[1] >= 100 else 0
    held = line.use == "output"
    line.claimed_by, line.use, line.pwm, line.edges = None, "free", None, 0
    line.held = held  # a released output keeps its level (see FAKE_DIFFERENCES)
    CHIP.log.append((gpio, "free", line.latch if held else None))
