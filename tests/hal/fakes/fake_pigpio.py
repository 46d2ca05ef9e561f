"""A fake of the ``pigpio`` Python module and of the pigpiod daemon behind it (Pi 1-4).

Written from the module's documented API, covering what gpiozero's ``PiGPIOFactory``
calls: ``pi(host, port)`` with ``connected`` and ``sl.s``, ``set_mode/get_mode``,
``set_pull_up_down``, ``read/write``, ``set_PWM_frequency/_range/_dutycycle`` and their
getters, ``set_glitch_filter``, ``callback``, ``get_hardware_revision``,
``get_current_tick``, ``stop`` and ``error``. One module object models one Pi with its
daemon; ``tests/hal/conftest.py`` loads a fresh copy for each test.

Test verbs live on ``DAEMON``: ``drive(gpio, level)``, ``float(gpio)``, ``level(gpio)``,
``pwm(gpio)``, ``settle()``, ``running = False`` for a daemon that is down, and ``hang()``
for one that is up but hung: it accepts a connection and never answers (a client blocks in
its socket's recv, as the real module's does: it sets no timeout) until ``answer()``. The
daemon outlives its clients, as pigpiod does: what a killed client set stays set.

Where this fake knowingly differs from the real library: ``FAKE_DIFFERENCES`` in
``tests/hal/test_real_factories.py``.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# -- documented constants ---------------------------------------------------------------
INPUT, OUTPUT = 0, 1
ALT0, ALT1, ALT2, ALT3, ALT4, ALT5 = 4, 5, 6, 7, 3, 2
PUD_OFF, PUD_DOWN, PUD_UP = 0, 1, 2
RISING_EDGE, FALLING_EDGE, EITHER_EDGE = 0, 1, 2
TIMEOUT = 2

PI_BAD_USER_GPIO = -2
PI_BAD_GPIO = -3
PI_BAD_MODE = -4
PI_BAD_LEVEL = -5
PI_BAD_PUD = -6
PI_BAD_DUTYCYCLE = -8
PI_BAD_DUTYRANGE = -21
PI_NOT_PWM_GPIO = -92
PI_BAD_FILTER = -125

_TEXT = {
    PI_BAD_USER_GPIO: "GPIO not 0-31",
    PI_BAD_GPIO: "GPIO not 0-53",
    PI_BAD_MODE: "mode not 0-7",
    PI_BAD_LEVEL: "level not 0-1",
    PI_BAD_PUD: "pud not 0-2",
    PI_BAD_DUTYCYCLE: "dutycycle not 0-range (default 255)",
    PI_BAD_DUTYRANGE: "dutycycle range not 25-40000",
    PI_NOT_PWM_GPIO: "GPIO is not in use for PWM",
    PI_BAD_FILTER: "bad filter parameter",
}

# The 18 PWM frequencies at the daemon's default 5 us sample rate (documented table).
FREQUENCIES_5US = (8000, 4000, 2000, 1600, 1000, 800, 500, 400, 320,
                   250, 200, 160, 100, 80, 50, 40, 20, 10)

exceptions = True


class error(Exception):
    """What the module raises for a negative status; ``value`` is the error's text."""

    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return repr(self.value)


def _check(status: int) -> int:
    if status < 0 and exceptions:
        raise error(_TEXT.get(status, f"error {status}"))
    return status


@dataclass
class Gpio:
    """One GPIO as the daemon holds it."""

    mode: int = INPUT
    pud: int = PUD_OFF
    latch: int = 0
    pwm_active: bool = False
    frequency: int = 800  # the daemon's default
    range: int = 255  # the daemon's default
    duty: int = 0
    glitch_us: int = 0
    driven: int | None = None


@dataclass
class Daemon:
    """pigpiod and the pins around it, with verbs for tests."""

    running: bool = True
    revision: int = 0xC03114  # Raspberry Pi 4 Model B rev 1.4, 4 GB
    gpios: list[Gpio] = field(default_factory=lambda: [Gpio() for _ in range(54)])
    # 32-bit microsecond ticks that wrap around soon after the start, as they do on a Pi
    # every 71.6 minutes: gpiozero must cope with the wrap.
    tick: int = 0xFFFF_FF00
    log: list[tuple[int, str, Any]] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)
    _last: dict[int, int] = field(default_factory=dict)
    _answering: threading.Event = field(default_factory=threading.Event)
    waiting: int = 0  # clients blocked on a hung daemon right now

    def __post_init__(self) -> None:
        self._answering.set()

    def hang(self) -> None:
        """Keep accepting connections but answer nothing (a hung pigpiod)."""
        self._answering.clear()

    def answer(self) -> None:
        """Answer again: every client blocked on the hung daemon carries on."""
        self._answering.set()

    def _reply(self) -> None:
        """Where a client waits for the daemon's answer to a command."""
        if not self._answering.is_set():
            with _lock:
                self.waiting += 1
            self._answering.wait()
            with _lock:
                self.waiting -= 1

    def level(self, gpio: int) -> float:
        """The pin's level: 0/1, or the duty (0..1) while PWM runs on it."""
        g = self.gpios[gpio]
        if g.mode == OUTPUT:
            return g.duty / g.range if g.pwm_active else g.latch
        if g.driven is not None:
            return g.driven
        return 1 if g.pud == PUD_UP else 0  # a floating input reads low here

    def pwm(self, gpio: int) -> tuple[int, float] | None:
        """(frequency, duty 0..1) while PWM runs on ``gpio``, else None."""
        g = self.gpios[gpio]
        return (g.frequency, g.duty / g.range) if g.pwm_active else None

    def drive(self, gpio: int, level: int) -> None:
        with _lock:
            self.gpios[gpio].driven = int(bool(level))
            self._changed(gpio)

    def float(self, gpio: int) -> None:
        with _lock:
            self.gpios[gpio].driven = None
            self._changed(gpio)

    def settle(self) -> None:
        """Wait until every client's notification thread has delivered its queued edges."""
        for conn in list(_connections):
            conn._events.join()
        if self.errors:
            raise self.errors[0]

    def _changed(self, gpio: int) -> None:
        """Level changes go to every connection that watches the GPIO (on its own thread)."""
        level = self.level(gpio)
        if level not in (0, 1):  # PWM toggles: the fake does not report each pulse
            return
        if self._last.get(gpio, -1) == level:
            return
        self._last[gpio] = int(level)
        self.tick = (self.tick + 1000) & 0xFFFF_FFFF
        for conn in list(_connections):
            conn._push(gpio, int(level), self.tick)


DAEMON = Daemon()
_lock = threading.RLock()
_connections: list[pi] = []


class _socklock:
    def __init__(self) -> None:
        self.s: object | None = None
        self.l = threading.Lock()


class _callback:
    """What ``pi.callback`` returns: ``cancel()`` stops the calls, ``tally()`` counts."""

    def __init__(self, conn: pi, gpio: int, edge: int,
                 func: Callable[[int, int, int], None] | None) -> None:
        self._conn, self.gpio, self.edge = conn, gpio, edge
        self.count = 0
        self.func = func if func is not None else self._tally

    def _tally(self, gpio: int, level: int, tick: int) -> None:
        self.count += 1

    def tally(self) -> int:
        return self.count

    def reset_tally(self) -> None:
        self.count = 0

    def cancel(self) -> None:
        with _lock:
            if self in self._conn._callbacks:
                self._conn._callbacks.remove(self)


class pi:
    """A connection to the daemon; ``connected`` is False when it is not running."""

    def __init__(self, host: str = "localhost", port: int | str = 8888,
                 show_errors: bool = True) -> None:
        self.connected = True
        self.sl = _socklock()
        self._host, self._port = host or "localhost", int(port)
        self._callbacks: list[_callback] = []
        self._events: queue.Queue[tuple[int, int, int] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        if not DAEMON.running:
            self.connected = False
            if show_errors:
                # The real module prints its complaint to standard output.
                print("%" * 60)
                print(f"Can't connect to pigpio at {self._host}({self._port})")
                print("\nDid you start the pigpio daemon? E.g. sudo pigpiod\n")
                print("%" * 60)
            return
        self.sl.s = object()
        DAEMON._reply()  # the real module's first command (the notification handle)
        # One notification thread per connection, as the real module has.
        self._thread = threading.Thread(target=self._loop, name="fake-pigpio-notify",
                                        daemon=True)
        self._thread.start()
        self._notify = self._thread  # the real module's name for its notification thread
        with _lock:
            _connections.append(self)

    def __repr__(self) -> str:
        return f"<pipio.pi host={self._host} port={self._port}>"

    def stop(self) -> None:
        """Release the connection; the daemon keeps every level as it is."""
        self.connected = False
        with _lock:
            if self in _connections:
                _connections.remove(self)
        if self._thread is not None:
            self._events.put(None)
            self._thread.join(timeout=5)
            self._thread = None
        self.sl.s = None

    # -- notifications --

    def _push(self, gpio: int, level: int, tick: int) -> None:
        if any(cb.gpio == gpio for cb in self._callbacks):
            self._events.put((gpio, level, tick))

    def _loop(self) -> None:
        while True:
            event = self._events.get()
            try:
                if event is None:
                    return
                gpio, level, tick = event
                with _lock:
                    targets = list(self._callbacks)
                for cb in targets:
                    # The client filters by edge, as the real one does in its thread.
                    if cb.gpio == gpio and (cb.edge == EITHER_EDGE
                                            or (cb.edge == RISING_EDGE) == (level == 1)):
                        try:
                            cb.func(gpio, level, tick)
                        except Exception as exc:
                            DAEMON.errors.append(exc)
            finally:
                self._events.task_done()

    def callback(self, user_gpio: int, edge: int = RISING_EDGE,
                 func: Callable[[int, int, int], None] | None = None) -> _callback:
        self._live()
        _user(user_gpio)
        cb = _callback(self, user_gpio, edge, func)
        with _lock:
            self._callbacks.append(cb)
            DAEMON._last.setdefault(user_gpio, int(DAEMON.level(user_gpio)))
        return cb

    # -- modes and levels --

    def set_mode(self, gpio: int, mode: int) -> int:
        self._live()
        _gpio(gpio)
        if mode not in (INPUT, OUTPUT, ALT0, ALT1, ALT2, ALT3, ALT4, ALT5):
            return _check(PI_BAD_MODE)
        with _lock:
            g = DAEMON.gpios[gpio]
            if mode != g.mode:
                g.pwm_active = False  # a new mode switches off what ran on the pin
            g.mode = mode
            DAEMON.log.append((gpio, "mode", mode))
            DAEMON._changed(gpio)
        return 0

    def get_mode(self, gpio: int) -> int:
        self._live()
        _gpio(gpio)
        return DAEMON.gpios[gpio].mode

    def set_pull_up_down(self, gpio: int, pud: int) -> int:
        self._live()
        _gpio(gpio)
        if pud not in (PUD_OFF, PUD_DOWN, PUD_UP):
            return _check(PI_BAD_PUD)
        with _lock:
            DAEMON.gpios[gpio].pud = pud
            DAEMON._changed(gpio)
        return 0

    def read(self, gpio: int) -> int:
        self._live()
        _gpio(gpio)
        g = DAEMON.gpios[gpio]
        if g.mode == OUTPUT and g.pwm_active:
            return 1 if g.duty >= g.range else 0  # a sample of the waveform
        return int(DAEMON.level(gpio))

    def write(self, gpio: int, level: int) -> int:
        self._live()
        _gpio(gpio)
        if level not in (0, 1, True, False):
            return _check(PI_BAD_LEVEL)
        with _lock:
            g = DAEMON.gpios[gpio]
            g.pwm_active = False  # documented: a write switches PWM off
            g.latch = int(level)
            DAEMON.log.append((gpio, "write", int(level)))
            DAEMON._changed(gpio)
        return 0

    # -- PWM --

    def set_PWM_frequency(self, user_gpio: int, frequency: int) -> int:
        self._live()
        _user(user_gpio)
        chosen = min(FREQUENCIES_5US, key=lambda f: abs(f - frequency))
        with _lock:
            DAEMON.gpios[user_gpio].frequency = chosen
        return chosen  # the numerically closest frequency, as documented

    def get_PWM_frequency(self, user_gpio: int) -> int:
        self._live()
        _user(user_gpio)
        return DAEMON.gpios[user_gpio].frequency

    def set_PWM_range(self, user_gpio: int, range_: int) -> int:
        self._live()
        _user(user_gpio)
        if not 25 <= range_ <= 40000:
            return _check(PI_BAD_DUTYRANGE)
        with _lock:
            g = DAEMON.gpios[user_gpio]
            if g.pwm_active:  # the duty keeps its fraction of the old range
                g.duty = round(g.duty * range_ / g.range)
            g.range = int(range_)
        return 0

    def get_PWM_range(self, user_gpio: int) -> int:
        self._live()
        _user(user_gpio)
        return DAEMON.gpios[user_gpio].range

    def set_PWM_dutycycle(self, user_gpio: int, dutycycle: int) -> int:
        self._live()
        _user(user_gpio)
        with _lock:
            g = DAEMON.gpios[user_gpio]
            if not 0 <= dutycycle <= g.range:
                return _check(PI_BAD_DUTYCYCLE)
            g.mode, g.pwm_active, g.duty = OUTPUT, True, int(dutycycle)
            DAEMON.log.append((user_gpio, "pwm", (g.frequency, g.duty / g.range)))
            DAEMON._changed(user_gpio)
        return 0

    def get_PWM_dutycycle(self, user_gpio: int) -> int:
        self._live()
        _user(user_gpio)
        g = DAEMON.gpios[user_gpio]
        if not g.pwm_active:
            return _check(PI_NOT_PWM_GPIO)
        return g.duty

    # -- the rest gpiozero uses --

    def set_glitch_filter(self, user_gpio: int, steady: int) -> int:
        self._live()
        _user(user_gpio)
        if not 0 <= steady <= 300_000:
            return _check(PI_BAD_FILTER)
        DAEMON.gpios[user_gpio].glitch_us = int(steady)
        return 0

    def get_hardware_revision(self) -> int:
        self._live()
        return DAEMON.revision

    def get_current_tick(self) -> int:
        self._live()
        return DAEMON.tick

    def _live(self) -> None:
        # The real module would fail on its closed socket; the fake says so plainly.
        if self.sl.s is None:
            raise ConnectionError("pigpio connection is closed")
        DAEMON._reply()


def _gpio(gpio: int) -> None:
    if not 0 <= gpio <= 53:
        _check(PI_BAD_GPIO)


def _user(gpio: int) -> None:
    if not 0 <= gpio <= 31:
        _check(PI_BAD_USER_GPIO)
