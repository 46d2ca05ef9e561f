"""The simulated launcher's pin port on the kernel's gpio-sim chip (the kernel test tier).

The firmware runs in another process on the real lgpio library; this side plays the
outside world through the simulator's sysfs files (``/sys/devices/platform/gpio-sim.N/
gpiochipM/sim_gpioK``): an input is driven by writing ``pull-down`` (a switch closed to
ground) or ``pull-up`` (let go) to ``pull``, an output is read from ``value``.

Nothing pushes output changes to us, so the outputs are polled from a reactor timer every
``period`` seconds. Software PWM shows there as a toggling line: an output that toggled
within the last ``window`` seconds reads as its duty, measured as the share of high
samples in that window; one that did not toggle reads as its level; a line that never
runs PWM (not in ``pwm``) reads as its level at once. (The period and the
rate really reached are measured by ``polls`` and ``rate``; docs/kernel-tier.md has the
figures.)

gpio-sim applies the bias a consumer asks for to its simulated pull: when the firmware
claims an input with its pull-up, the line goes high whatever this side wanted. A real
switch to ground beats a weak internal pull-up, so every ``recheck`` polls the port reads
back the pulls it set and writes again any that a claim overwrote.

Test code: it lives with the kernel tier, which alone loads it (it is not shipped).
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path

from hal.base import Scheduler

PERIOD = 0.001  # s between two polls of the outputs (asked for; ``rate`` is what was reached)
# A line that toggled within this is running PWM. lgpio's PWM is a thread of the firmware's
# process: in the tier's VM (QEMU without KVM, on a shared machine) its 1 kHz, 85 % wave was
# seen low for up to 38 ms at a time when the machine was quiet (p99 22 ms, high only ~57 %
# of the time) and for hundreds of ms when it was busy, so a line must stay low for longer
# than that before the physics calls it off. A braking stop (IN2 high) or the driver's
# sleep is seen at once all the same: only a coasting IN1 waits out the window.
WINDOW = 0.25
RECHECK = 8  # every this many polls, the inputs' pulls are read back


class _Line:
    __slots__ = ("fd", "level", "samples")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.samples: deque[tuple[float, int]] = deque()
        self.level = 0.0  # what ``level()`` reports: 0, 1, or a duty


class GpioSimPins:
    """A ``hal.sim.PinPort`` over a gpio-sim chip's sysfs files, polled on ``reactor``."""

    def __init__(self, sysfs: str | Path, reactor: Scheduler, period: float = PERIOD,
                 window: float = WINDOW, recheck: int = RECHECK,
                 pwm: Iterable[int] | None = None) -> None:
        """``pwm``: the outputs the firmware may run as PWM; only these are read through the
        window. Every other output (a plain level, such as nSLEEP) reads its level at once:
        through the window, nSLEEP falling read as a duty, the driver awake, for up to a
        window after it fell (the world's nSLEEP read-back lagged 100-250 ms). None: all."""
        self.sysfs = Path(sysfs)
        self._pwm = None if pwm is None else frozenset(pwm)
        self.reactor = reactor
        self.period = period
        self.window = window
        self.recheck = recheck
        self.polls = 0
        self._started: float | None = None
        self._lines: dict[int, _Line] = {}
        self._wanted: dict[int, str] = {}  # input -> the pull this side set
        self._listener: Callable[[], None] | None = None
        self._timer = reactor.register_timer(self._poll, reactor.monotonic(), "gpiosim.poll")

    # -- PinPort --

    def drive(self, number: int, low: bool) -> None:
        pull = "pull-down" if low else "pull-up"
        self._wanted[number] = pull
        self._write_pull(number, pull)

    def level(self, number: int) -> float:
        line = self._lines.get(number)
        return self.read(number) if line is None else line.level

    def watch(self, numbers: Iterable[int], listener: Callable[[], None]) -> None:
        self._listener = listener
        for number in numbers:
            if number not in self._lines:
                fd = os.open(self.sysfs / f"sim_gpio{number}" / "value", os.O_RDONLY)
                self._lines[number] = _Line(fd)

    # -- the rest --

    def read(self, number: int) -> int:
        """A line's level now, read once from its ``value`` file."""
        return int((self.sysfs / f"sim_gpio{number}" / "value").read_text().strip())

    @property
    def rate(self) -> float:
        """Polls a second since the port started (what the reactor really reached)."""
        if self._started is None:
            return 0.0
        elapsed = time.monotonic() - self._started
        return self.polls / elapsed if elapsed > 0 else 0.0

    def close(self) -> None:
        self.reactor.unregister_timer(self._timer)
        for line in self._lines.values():
            os.close(line.fd)
        self._lines.clear()

    def _write_pull(self, number: int, pull: str) -> None:
        (self.sysfs / f"sim_gpio{number}" / "pull").write_text(pull)

    def _poll(self, eventtime: float) -> float:
        if self._started is None:
            self._started = time.monotonic()
        self.polls += 1
        changed = False
        horizon = eventtime - self.window
        for number, line in self._lines.items():
            value = 1 if os.pread(line.fd, 2, 0)[:1] == b"1" else 0
            if self._pwm is not None and number not in self._pwm:
                if value != line.level:
                    line.level = float(value)
                    changed = True
                continue
            samples = line.samples
            samples.append((eventtime, value))
            while samples and samples[0][0] < horizon:
                samples.popleft()
            high = sum(v for _, v in samples)
            if 0 < high < len(samples):  # toggled within the window: PWM at the measured duty
                # Counted from the first high sample: the low stretch before a start is not
                # part of the wave (it would make a motor that just started look slow).
                start = next(i for i, (_, v) in enumerate(samples) if v)
                level = round(high / (len(samples) - start) * 20) / 20 or 0.05
            else:
                level = float(value)
            if level != line.level:
                line.level = level
                changed = True
        if self.recheck and self.polls % self.recheck == 0:
            for number, pull in self._wanted.items():
                path = self.sysfs / f"sim_gpio{number}" / "pull"
                if path.read_text().strip() != pull:
                    self._write_pull(number, pull)  # a consumer's bias overwrote it
        if changed and self._listener is not None:
            self._listener()
        return eventtime + self.period
