"""The gpio-sim chip's lines as the world outside the firmware sees them (the kernel tier).

A line's level and pull from gpio-sim's sysfs files; the chip's and a line's info from the
gpio character device's ioctls; ``GpioTrace``, the kernel's own record of every write to a
line (who, when, what); ``LineWatch``, ``Roller`` and ``Sampler``, which time the lines from
their sysfs values in a busy loop. kerneltier.py builds the firmware and its world on these.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path

from launcher.core import config

SYSFS = Path(os.environ.get("GPIOSIM_SYSFS", "/nonexistent"))
PINS = config.load().pins


def value(number: int) -> int:
    """A line's level now, from gpio-sim's ``value`` file."""
    return int((SYSFS / f"sim_gpio{number}" / "value").read_text().strip())


def levels(*names: str) -> dict[str, int]:
    return {name: value(getattr(PINS, name)) for name in names}


def pull(number: int, level: str) -> None:
    """gpio-sim's pull of a line: ``up`` or ``down``; what a released line reads."""
    (SYSFS / f"sim_gpio{number}" / "pull").write_text(f"pull-{level}")


# The gpio character device's ioctls (linux/gpio.h): the chip's name, label and line count;
# a line's consumer and flags.
GPIO_GET_CHIPINFO_IOCTL = 0x8044B401  # _IOR(0xB4, 0x01, struct gpiochip_info): 68 bytes
GPIO_V2_GET_LINEINFO_IOCTL = 0xC100B405  # _IOWR(0xB4, 0x05, struct gpio_v2_line_info): 256
LINE_USED, LINE_INPUT, LINE_OUTPUT = 1 << 0, 1 << 2, 1 << 3  # GPIO_V2_LINE_FLAG_*


def chip_info(path: str) -> tuple[str, str, int]:
    """(name, label, lines) of the gpiochip at ``path``."""
    import fcntl
    import struct

    buf = bytearray(68)
    with open(path, "rb") as chip:
        fcntl.ioctl(chip, GPIO_GET_CHIPINFO_IOCTL, buf)
    name, label, lines = struct.unpack("32s32sI", buf)
    return name.rstrip(b"\0").decode(), label.rstrip(b"\0").decode(), lines


def line_info(path: str, offset: int) -> tuple[str, int]:
    """(consumer, GPIO_V2_LINE_FLAG_* flags) of one line of the gpiochip at ``path``."""
    import fcntl
    import struct

    buf = bytearray(256)
    struct.pack_into("I", buf, 64, offset)
    with open(path, "rb") as chip:
        fcntl.ioctl(chip, GPIO_V2_GET_LINEINFO_IOCTL, buf)
    _, consumer, _, _, flags = struct.unpack_from("32s32sIIQ", buf)
    return consumer.rstrip(b"\0").decode(), flags


TRACING = Path("/sys/kernel/tracing")  # tracefs, mounted by .ci/kernel/guest
TRACE_EVENT = "events/gpio/gpio_value"  # on for the whole session (.ci/kernel/guest)


def gpio_base() -> int:
    """The gpio-sim chip's first global GPIO number (the tracepoint's numbering)."""
    for chip in Path("/sys/class/gpio").glob("gpiochip*"):
        if (chip / "label").read_text().startswith("gpio-sim"):
            return int((chip / "base").read_text())
    raise AssertionError("no gpio-sim chip in /sys/class/gpio")


class Write:
    """One write to a line, as the kernel traced it."""

    __slots__ = ("comm", "name", "pid", "t", "value")

    def __init__(self, t: float, pid: int, comm: str, name: str, value: int) -> None:
        self.t, self.pid, self.comm, self.name, self.value = t, pid, comm, name, value

    def __repr__(self) -> str:
        return f"{self.name}={self.value} by {self.comm}-{self.pid} at {self.t:.4f}"


# ``comm-TID (TGID) [cpu] flags time: gpio_value: LINE set VALUE``: with ``record-tgid`` on,
# a write names its process (the TGID), not only its thread (a process's threads, such as
# safe-stop's timed steps, share one); the comm is the thread's name.
_WRITE = re.compile(r"^\s*(.+?)-(\d+)\s+(?:\(\s*([\d-]+)\)\s+)?\[\d+\].*?\s([\d.]+): "
                    r"gpio_value: (\d+) set (\d)")


class GpioTrace:
    """Every write to a gpio line while it runs, from the kernel's own tracepoint
    (``gpio:gpio_value``, each set through gpiolib: a claim's first level, a write, lgpio's
    PWM): nothing is missed however short, and each write names its process. Timed on
    CLOCK_MONOTONIC (``trace_clock mono``), the clock ``time.monotonic`` reads. What it
    cannot see: a line let go, which gpio-sim returns to its pull without a write."""

    running: GpioTrace | None = None  # the kernel has one trace buffer: one at a time

    def __init__(self) -> None:
        assert GpioTrace.running is None, "a GpioTrace is already running"
        GpioTrace.running = self
        self.base = gpio_base()
        self.names = {self.base + number: name for name, number in vars(PINS).items()
                      if isinstance(number, int)}
        # The event, its filter, the clock and the tgid recording were set up once, before
        # pytest (.ci/kernel/guest): enabling or disabling an event here would patch live
        # kernel code (the gpio tracepoint's jump label in gpiolib and, through
        # record-tgid, sched_switch's in __schedule) while both vCPUs run it, which wedged
        # the guest (docs/kernel-tier.md, "The stall, found"). Only the ring buffer's
        # switch and its contents change here.
        assert (TRACING / TRACE_EVENT / "enable").read_text().strip() == "1", (
            "the gpio_value event is not on: .ci/kernel/guest sets it up before pytest")
        for path, text in (("tracing_on", "0"), ("trace", ""), ("tracing_on", "1")):
            (TRACING / path).write_text(text)
        self.start = time.monotonic()
        self.end: float | None = None
        self.writes: list[Write] = []

    def stop(self) -> GpioTrace:
        if self.end is not None:
            return self
        self.end = time.monotonic()
        GpioTrace.running = None
        (TRACING / "tracing_on").write_text("0")
        text = (TRACING / "trace").read_text()
        (TRACING / "trace").write_text("")
        kept = re.search(r"entries-in-buffer/entries-written: (\d+)/(\d+)", text)
        assert kept and kept.group(1) == kept.group(2), (
            f"the kernel's trace lost writes: {kept.group(0) if kept else 'no header'}")
        for line in text.splitlines():
            if m := _WRITE.match(line):
                tid, tgid = m.group(2), m.group(3)
                pid = int(tgid) if tgid and tgid.isdigit() else int(tid)
                name = self.names.get(int(m.group(5)), f"gpio{m.group(5)}")
                self.writes.append(Write(float(m.group(4)), pid, m.group(1), name,
                                         int(m.group(6))))
        return self

    def of(self, name: str, since: float = 0.0, until: float = float("inf")) -> list[Write]:
        return [w for w in self.writes if w.name == name and since <= w.t <= until]

    def driver_slept(self, since: float, by: str | None = None) -> Write | None:
        """The first write of nSLEEP low after ``since`` (by the thread named ``by``, if
        given): every stop's (the lid's at once, a lapse's after its brake). nSLEEP is a
        plain output, written by the thread that stops; IN1 and IN2 are PWM outputs, whose
        levels lgpio's own PWM thread writes whichever thread asked (so their writes name no
        stop)."""
        return next((w for w in self.writes if w.t >= since and w.name == "motor_sleep"
                     and w.value == 0 and (by is None or w.comm == by)), None)


class LineWatch:
    """Busy-reads one line's ``value`` file: when did it go low and stay low."""

    def __init__(self, number: int) -> None:
        self.fd = os.open(SYSFS / f"sim_gpio{number}" / "value", os.O_RDONLY)

    def read(self) -> int:
        return 1 if os.pread(self.fd, 2, 0)[:1] == b"1" else 0

    def low_since(self, hold: float = 0.003, timeout: float = 5.0) -> float | None:
        """The wall time of the first low sample of a stretch ``hold`` s long (PWM's low
        parts are shorter), or None if the line never stayed low within ``timeout``."""
        end = time.monotonic() + timeout
        first: float | None = None
        while True:
            now = time.monotonic()
            if self.read():
                first = None
            elif first is None:
                first = now
            elif now - first >= hold:
                return first
            if now > end:
                return None

    def is_running(self, within: float = 0.01) -> bool:
        """Whether the line was high at least once within ``within`` s (PWM or steady)."""
        end = time.monotonic() + within
        while time.monotonic() < end:
            if self.read():
                return True
        return False

    def close(self) -> None:
        os.close(self.fd)


class Roller(LineWatch):
    """The shooter's bridge, read as one: 1 while it drives the roller forward.

    Forward is nSLEEP high, IN1 high (PWM: high samples), IN2 low. Stopped is anything
    else: IN1 low (coast), IN2 high too (brake, ``motor.brake = true``: IN1 then stays
    HIGH), or the driver asleep. So "the roller is off" is read from all three lines, not
    from IN1 going low, which a braking stop never does.
    """

    def __init__(self) -> None:
        self.fds = [os.open(SYSFS / f"sim_gpio{n}" / "value", os.O_RDONLY)
                    for n in (PINS.motor_sleep, PINS.motor_in1, PINS.motor_in2)]
        self.fd = self.fds[1]

    # lgpio's PWM is a thread of the firmware: in the loaded VM its wave was seen low for
    # 38 ms (idle) to 389 ms (busy) at a stretch while running. So IN2 high (a brake) or
    # nSLEEP low is a stop at once, timed from its first sample; IN1 low alone (a coast)
    # only after PWM_GAP s of it, timed from the stretch's first low sample.
    PWM_GAP = 0.25

    def sample(self) -> tuple[int, bool]:
        """(1 while driving forward, whether the bridge is surely stopped)."""
        sleep, in1, in2 = (os.pread(fd, 2, 0)[:1] == b"1" for fd in self.fds)
        return (1 if sleep and in1 and not in2 else 0), (not sleep or in2)

    def read(self) -> int:
        return self.sample()[0]

    def low_since(self, hold: float = 0.0, timeout: float = 5.0) -> float | None:
        """The wall time the roller stopped (see PWM_GAP), or None within ``timeout``."""
        end = time.monotonic() + timeout
        first: float | None = None  # the first sample not driving, of this stretch
        surely: float | None = None  # the first sample of a brake or a sleeping driver
        while True:
            now = time.monotonic()
            driving, sure = self.sample()
            if driving:
                first = surely = None
            else:
                if first is None:
                    first = now
                if sure and surely is None:
                    surely = now
                if surely is not None and now - surely >= hold:
                    # A brake that ended a PWM gap stopped the roller then, not at the gap.
                    return surely if surely - first < self.PWM_GAP else first
                if now - first >= max(hold, self.PWM_GAP):
                    return first
            if now > end:
                return None

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)


class Sampler:
    """The roller (Roller.read: 1 while driven forward) sampled in a busy loop, keeping
    every change: (wall time, level) at the first sample and at each change after."""

    def __init__(self, roller: Roller) -> None:
        self.roller = roller
        self.samples: list[tuple[float, int]] = []
        self.reads = 0

    def run(self, seconds: float = 0.0, until: Callable[[], bool] | None = None) -> None:
        """For ``seconds``, or until ``until()`` (asked every 10 ms) says so."""
        end = time.monotonic() + seconds
        ask = time.monotonic()
        while True:
            now = time.monotonic()
            v = self.roller.read()
            self.reads += 1
            if not self.samples or v != self.samples[-1][1]:
                self.samples.append((now, v))
            if until is None:
                if now >= end:
                    return
            elif now - ask >= 0.01:
                ask = now
                if until():
                    return

    def level_at(self, at: float) -> int:
        return next(v for t, v in reversed(self.samples) if t <= at)

    def changes(self, since: float, until: float) -> list[tuple[float, int]]:
        return [(t, v) for t, v in self.samples if since < t < until]
