"""Helpers of the kernel tier (conftest.py): the real firmware on the real lgpio, on gpio-sim.

These tests run only inside the VM that ``make test-kernel`` boots (.ci/kernel/run): it
loads gpio-sim, makes a 54-line chip the only /dev/gpiochip0, fakes a Pi 5 revision in
/proc/cpuinfo, and sets ``LAUNCHER_KERNEL_TIER=1`` and ``GPIOSIM_SYSFS``. Every test here
carries the ``kernel`` marker, which plain ``pytest`` deselects (pyproject addopts); asked
for outside the VM (``pytest -m kernel``), they fail with one line saying so.

The pieces: ``World`` is the simulated launcher's ONE physics model (hal.sim.SimLauncher)
on the gpio-sim pin port (gpiosim.py's GpioSimPins), on a real reactor on a thread of this
process; ``Firmware`` is ``launcher run --config FILE`` started as systemd would
(NOTIFY_SOCKET, WATCHDOG_USEC, the working directory on a tmpfs), with its log lines and
notifications recorded with their wall times, and every write from its exec to READY=1
checked; ``Watchdog`` is systemd's watchdog rule and ``SafeStop`` its ExecStopPost.
What the lines do is read by lines.py (``GpioTrace``, the kernel's record of every write;
``Roller``, ``LineWatch`` and ``Sampler``, from the lines' sysfs values).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tomli_w
from gpiosim import GpioSimPins
from lines import PINS, SYSFS, GpioTrace

from hal.sim import Physics, SimLauncher
from launcher.core.reactor import RealReactor

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
IN_VM = os.environ.get("LAUNCHER_KERNEL_TIER") == "1" and bool(os.environ.get("GPIOSIM_SYSFS"))
LAUNCHER = Path(sys.executable).with_name("launcher")
RESULTS = Path(os.environ.get("KERNEL_RESULTS", "/tmp/kernel-results"))


def record(name: str, **figures: Any) -> None:
    """Keep a measured figure for docs/kernel-tier.md (tests/kernel/report.py)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(figures, indent=1, sort_keys=True))


# -- what the tests hold the firmware to ------------------------------------------------------

OUTPUTS = ("motor_sleep", "motor_in1", "motor_in2", "rotator")
# The lines that drive a motor: never high from exec to READY, and what safe-stop drives low
# (launcher.firmware.safestop.SAFE_LOW, nSLEEP first; the optional ones are not wired here).
SAFE = OUTPUTS
# s: the lid's edge to the roller off on the pin thread, with the reactor hung
# (test_pin_thread.py). The floor (test_real_lgpio.py: the edge to a write in one bare lgpio
# callback) was p50 3-13 ms and at most 12-45 ms on this loaded machine, and the firmware's
# own pin-thread stop p50 55 ms, at most 156 ms, under a load of 8 on 2 cores; these are
# p50 93 ms, at most 145 ms in the next run: these are several times the floor
# (test_real_lgpio checks it), and about half of what the other paths take there (the lease
# lapses 0.73-1 s after the edge, the reactor runs after 1.5 s). Which thread wrote each
# stop is checked too, from the kernel's trace, whatever the time.
LID_P50 = 0.15
LID_MAX = 0.4
# Every output the firmware claims, the start-up watch's lines. Of these, the LED and the
# amplifier go high at start-up on purpose (the LED's pattern, the start-up cue): their
# highs are counted, the motor lines' must be none.
ALL_OUTPUTS = (*OUTPUTS, "led", "amp_enable")


def unit_timeout_s(key: str) -> float:
    """A ``KEY=N`` seconds setting of systemd/launcher.service, read from the unit file."""
    text = (ROOT / "systemd" / "launcher.service").read_text()
    found = re.search(rf"^{key}=(\d+)\s*$", text, re.M)
    assert found, f"systemd/launcher.service has no {key}="
    return float(found.group(1))


LGPIO_THREAD = "lgpio-callback"  # the name harness.py gives lgpio's notification thread
GUARD_THREAD = "actuators-guard"  # the actuators' guard thread's own name


# -- the world around the firmware: the one physics model on gpio-sim ---------------------------

# The outputs the firmware runs as PWM (hal.gpio: HBridgeMotor's IN1 and IN2, GpioRotator's
# second input); every other output is a plain level (DigitalOutputDevice), read at once.
PWM_LINES = tuple(n for n in (PINS.motor_in1, PINS.motor_in2, PINS.rotator_in2) if n is not None)


class World:
    """SimLauncher on GpioSimPins, its reactor on a thread; verbs go through ``do``."""

    def __init__(self, side: str = "mild", cards: int = 60) -> None:
        self.reactor = RealReactor()
        self.port = GpioSimPins(SYSFS, self.reactor, pwm=PWM_LINES)
        self.sim = SimLauncher(self.reactor, PINS, Physics(), side=side, port=self.port)
        self.sim.load(range(cards))
        self._thread = threading.Thread(target=self.reactor.run, name="world-reactor",
                                        daemon=True)
        self._thread.start()

    def do(self, verb: Callable[[SimLauncher], object], timeout: float = 5.0) -> float:
        """Run ``verb(sim)`` on the world's reactor; returns the wall time just before it."""
        done = threading.Event()
        at: list[float] = []

        def call() -> None:
            at.append(time.monotonic())
            verb(self.sim)
            done.set()

        self.reactor.post(call)
        if not done.wait(timeout):
            raise TimeoutError("the world's reactor did not run the verb")
        return at[0]

    def ejected(self) -> int:
        return self.do_get(lambda sim: sim.ejected_total)

    def do_get(self, getter: Callable[[SimLauncher], Any]) -> Any:
        out: list[Any] = []
        self.do(lambda sim: out.append(getter(sim)))
        return out[0]

    def close(self) -> None:
        self.do(lambda sim: self.port.close())
        self.reactor.stop()
        self._thread.join(timeout=5)


# -- the firmware process ----------------------------------------------------------------------

HUNG = "harness: the reactor thread hangs now"  # harness.py's lines
RESUMED = "harness: the reactor thread runs again"
RAISED = "harness: a lid_closed subscriber raises now"
HANG_NOW, HANG_IN_TICK = signal.SIGUSR1, signal.SIGUSR2  # what the harness does on each
EVENT = re.compile(r"launcher(?:\.\w+)*: (\w+)((?: \w+=\S*)*)\s*$")


class Firmware:
    """``launcher run --config FILE`` (or the hang harness), started as systemd would."""

    def __init__(self, folder: Path, *, toml: str = "", watchdog_usec: int | None = None,
                 harness: bool = False, seed: int = 1, console_port: str = "",
                 env: dict[str, str] | None = None, watch_start: bool = True) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.config = folder / "launcher.toml"
        self.config.write_text(_merged(_config(folder, seed, console_port), toml))
        self.notify_path = folder / "notify.sock"
        self.notify_path.unlink(missing_ok=True)
        self._notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._notify.bind(str(self.notify_path))
        self._notify.settimeout(0.1)
        # Each datagram stamped by the kernel as the firmware sends it (af_unix stamps it in
        # the sender's sendmsg): READY=1 is timed from its send, not from when this
        # process's reader thread got round to it (the firmware's reactor runs on at once).
        self._notify.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.notifications: list[tuple[float, str]] = []
        self.lines: list[tuple[float, str]] = []
        self.events: list[tuple[float, str, dict[str, str]]] = []
        self._cv = threading.Condition()
        env = dict(os.environ, NOTIFY_SOCKET=str(self.notify_path), PYTHONUNBUFFERED="1",
                   **(env or {}))
        env.pop("WATCHDOG_PID", None)
        if watchdog_usec is not None:
            env["WATCHDOG_USEC"] = str(watchdog_usec)
        else:
            env.pop("WATCHDOG_USEC", None)
        argv = ([sys.executable, str(HERE / "harness.py")] if harness else [str(LAUNCHER)])
        argv += ["run", "--config", str(self.config)]
        cwd = os.environ.get("LG_WD", str(folder))  # the unit's WorkingDirectory, on a tmpfs
        # Every write from exec to READY=1: no motor line may go high (a glitch at start-up).
        self._startup: GpioTrace | None = GpioTrace() if watch_start else None
        self.ready_at: float | None = None
        self.started = time.monotonic()
        self.proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.died: float | None = None
        self._stop = False
        self._readers = [threading.Thread(target=self._read_log, name="fw-log", daemon=True),
                         threading.Thread(target=self._read_notify, name="fw-notify",
                                          daemon=True)]
        for t in self._readers:
            t.start()

    def _read_log(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            now = time.monotonic()
            with self._cv:
                self.lines.append((now, line.rstrip("\n")))
                m = EVENT.search(line)
                if m:
                    fields = dict(kv.split("=", 1) for kv in m.group(2).split())
                    self.events.append((now, m.group(1), fields))
                self._cv.notify_all()

    def _read_notify(self) -> None:
        while not self._stop:
            try:
                data, ancillary, _, _ = self._notify.recvmsg(4096, 64)
            except TimeoutError:
                continue
            except OSError:
                return
            sent = _sent_at(ancillary)
            with self._cv:
                for field in data.decode().splitlines():
                    self.notifications.append((sent, field))
                self._cv.notify_all()

    def wait_for(self, test: Callable[[], Any], timeout: float = 30.0, what: str = "") -> Any:
        end = time.monotonic() + timeout
        with self._cv:
            while True:
                got = test()
                if got:
                    return got
                left = end - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and what != "exit"):
                    log = "\n".join(line for _, line in self.lines[-30:])
                    raise AssertionError(f"firmware: no {what or 'condition'} within "
                                         f"{timeout} s (rc={self.proc.poll()}):\n{log}")
                self._cv.wait(min(left, 0.05))

    def ready(self, timeout: float = 60.0) -> None:
        """Wait for READY=1; then the start-up watch's verdict: no output went high."""
        self.ready_at = self.wait_for(
            lambda: next((t for t, f in self.notifications if f == "READY=1"), None), timeout,
            "READY=1")
        if self._startup is None:
            return
        trace, self._startup = self._startup.stop(), None
        # Every write but this process's own (lgpio's PWM writes from a thread of its own).
        mine = {int(t) for t in os.listdir(f"/proc/{os.getpid()}/task")}
        ours = [w for w in trace.writes if w.pid not in mine and w.t <= self.ready_at]
        highs = {name: [w for w in ours if w.name == name and w.value] for name in ALL_OUTPUTS}
        starts = json.loads((RESULTS / "startup.json").read_text()) \
            if (RESULTS / "startup.json").exists() else {"starts": []}
        starts["starts"].append({
            "exec_to_ready_s": self.ready_at - self.started, "writes": len(ours),
            "highs": {n: len(h) for n, h in highs.items()},
            "lines": sorted({w.name for w in ours})})
        record("startup", **starts)
        glitches = [f"{w.name} written high at {w.t - self.started:.3f} s"
                    for name, writes in highs.items() if name in SAFE for w in writes]
        assert not glitches, (
            f"a motor output went high between exec and READY=1 (a glitch at start-up): "
            f"{'; '.join(glitches[:5])}")
        claimed = {w.name for w in ours}
        assert set(SAFE) <= claimed, f"the start wrote no level to {set(SAFE) - claimed}"

    def hung_until(self, since: int) -> float | None:
        """When the harness said the hang that began after log line ``since`` ended."""
        return next((t for t, line in self.lines[since:] if line.startswith(RESUMED)), None)

    def event(self, kind: str, since: int = 0, timeout: float = 10.0, **match: str
              ) -> tuple[float, str, dict[str, str]]:
        """The first event ``kind`` (with these fields) among the events from ``since`` on."""
        def found() -> Any:
            for ev in self.events[since:]:
                if ev[1] == kind and all(ev[2].get(k) == v for k, v in match.items()):
                    return ev
            return None
        return self.wait_for(found, timeout, f"event {kind} {match}")

    def first(self, kinds: tuple[str, ...], since: int = 0, timeout: float = 10.0
              ) -> tuple[float, str, dict[str, str]]:
        """The first event of any of ``kinds`` from ``since`` on."""
        def found() -> Any:
            return next((e for e in self.events[since:] if e[1] in kinds), None)
        return self.wait_for(found, timeout, f"one of {kinds}")

    def mark(self) -> int:
        with self._cv:
            return len(self.events)

    def signal(self, signum: int) -> float:
        at = time.monotonic()
        self.proc.send_signal(signum)
        return at

    def hang(self, signum: int = HANG_NOW) -> tuple[float, int]:
        """SIGUSR1 (hang now) or SIGUSR2 (hang in the next Actuators._tick) to the hang
        harness: (the wall time it said the hang began, the log line it said it on)."""
        mark = len(self.lines)
        self.proc.send_signal(signum)

        def said() -> Any:
            return next(((t, mark + i) for i, (t, line) in enumerate(self.lines[mark:])
                         if line.startswith(HUNG)), None)
        return self.wait_for(said, 10, "the hang")

    def wait_exit(self, timeout: float = 20.0) -> float:
        """Wait for the process to end; the wall time it was seen gone."""
        self.proc.wait(timeout)
        self.died = time.monotonic()
        return self.died

    def log(self) -> str:
        with self._cv:
            return "\n".join(line for _, line in self.lines)

    def stop(self) -> None:
        if self._startup is not None:
            self._startup.stop()
            self._startup = None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._stop = True
        for t in self._readers:
            t.join(timeout=5)
        self._notify.close()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # linux/asm-generic/socket.h (also SCM_)


def _sent_at(ancillary: list[tuple[int, int, bytes]]) -> float:
    """The CLOCK_MONOTONIC time a datagram was sent, from its SCM_TIMESTAMPNS stamp
    (CLOCK_REALTIME: the guest runs no time daemon, so the two clocks keep one offset)."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
            sec, nsec = struct.unpack("qq", data[:16])
            offset = time.time_ns() - time.monotonic_ns()
            return (sec * 1_000_000_000 + nsec - offset) / 1e9
    raise AssertionError("a notification came without its kernel timestamp")


def _merged(base: str, extra: str) -> str:
    """The tier's config with a test's own on top: a table both name gets the keys of each
    (the test's win), where the two texts joined would declare it twice."""
    merged = tomllib.loads(base)
    for table, keys in tomllib.loads(extra).items():
        merged[table] = {**merged.get(table, {}), **keys}
    return tomli_w.dumps(merged)


def _config(folder: Path, seed: int, console_port: str) -> str:
    return f"""\
[board]
pin_factory = "lgpio"
[luck]
seed = {seed}
[audio]
backend = "null"
[state]
path = "{folder / 'state.json'}"
[console]
port = "{console_port}"
[pins]
# No nSLEEP read-back here: the world answers nSLEEP's moves from a polling process in an
# emulated VM, late by more than the firmware's SLEEP_SETTLE (50 ms) in its tail, and the
# firmware rightly faults driver_sleep then. The read-back and its start test are tested on
# the simulated board (tests/firmware/test_copper.py); docs/kernel-tier.md says so.
sleep_sense = -1
# Nor the power contacts' read-backs, for the same reason: each reads the driver's outputs
# through the contact, so the world must have seen nSLEEP fall before the firmware reads it
# (50 ms after a drive, 250 ms after a lid move), and in this VM it sometimes had not. A
# fault found is latched now, so one late answer failed every test after it (seen: a
# power_contact latched after a flip, 1 run of 4 with the trace fixed). They and their
# latching are tested on the simulated board (tests/firmware/test_copper.py, test_latched.py
# and the circuit campaign).
power_contact_sense = -1
rotator_contact_sense = -1
[timing]
# The world moves the lid's three switches one sysfs write at a time, from a process in an
# emulated VM: a lid lifted from shut to fully open took 92 ms there from its first write to
# its last (NO and NC both open meanwhile, as an SPDT is for a few ms). The simulated board
# tests the stock 30 ms (tests/firmware/test_interlocks.py); docs/kernel-tier.md says so.
lid_pair_ms = 500
"""


class Watchdog:
    """systemd's part for ``WatchdogSec=``, on a thread of its own: once ``WATCHDOG_USEC``
    has passed since the last ``WATCHDOG=1`` (or READY=1), SIGABRT, as systemd sends it
    (there is no systemd in the guest: virtme-ng runs its own init)."""

    def __init__(self, fw: Firmware, usec: int) -> None:
        self.fw, self.limit = fw, usec / 1e6
        self.aborted: float | None = None
        self._thread = threading.Thread(target=self._run, name="watchdog", daemon=True)
        self._thread.start()

    def pings(self) -> list[float]:
        with self.fw._cv:
            return [t for t, f in self.fw.notifications if f == "WATCHDOG=1"]

    def _run(self) -> None:
        while self.fw.proc.poll() is None:
            last = max([*self.pings(), self.fw.ready_at or self.fw.started])
            if time.monotonic() - last > self.limit:
                self.aborted = self.fw.signal(signal.SIGABRT)
                return
            time.sleep(0.002)

    def join(self, timeout: float) -> float:
        """Wait for the SIGABRT; its wall time."""
        self._thread.join(timeout)
        assert self.aborted is not None, f"no watchdog SIGABRT within {timeout} s"
        return self.aborted


class SafeStop:
    """``launcher safe-stop --config FILE`` as ExecStopPost runs it, run to its end."""

    def __init__(self, fw: Firmware, timeout: float = 180.0) -> None:
        self.start = time.monotonic()
        proc = subprocess.Popen([str(LAUNCHER), "safe-stop", "--config", str(fw.config)],
                                cwd=os.environ.get("LG_WD"), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        self.pid = proc.pid
        self.output = proc.communicate(timeout=timeout)[0].strip()
        self.end = time.monotonic()
        assert proc.returncode == 0, self.output


class Pty:
    """The test's end of a pty pair; the firmware's ``console.port`` is the other end."""

    def __init__(self) -> None:
        import tty

        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self._buffer = b""

    def lines(self, timeout: float) -> list[str]:
        """Every complete line that arrives within ``timeout`` s."""
        import select

        end = time.monotonic() + timeout
        out: list[str] = []
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return out
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                self._buffer += os.read(self.master, 4096)
                *done, self._buffer = self._buffer.split(b"\n")
                out += [line.decode(errors="replace").rstrip("\r") for line in done]

    def wait_line(self, test: Callable[[str], bool], timeout: float = 30.0) -> str:
        end = time.monotonic() + timeout
        seen: list[str] = []
        while time.monotonic() < end:
            for line in self.lines(0.2):
                seen.append(line)
                if test(line):
                    return line
        raise AssertionError(f"console: no such line within {timeout} s; saw {seen[-10:]}")

    def command(self, text: str, timeout: float = 30.0) -> str:
        """Send one command; its one ``ok ...`` or ``error ...`` reply."""
        os.write(self.master, text.encode() + b"\r\n")
        return self.wait_line(lambda line: line.startswith(("ok", "error")), timeout)

    def close(self) -> None:
        os.close(self.master)
        os.close(self.slave)


def settle(world: World, pty: Pty, timeout: float = 30.0) -> None:
    """Lid closed, no card in the beam, no fault, state ready: a clean start for a press."""
    world.do(lambda sim: sim.close_lid())
    end = time.monotonic() + timeout
    while world.do_get(lambda sim: sim.in_beam) is not None:
        assert time.monotonic() < end, "a card stays in the beam"
        time.sleep(0.05)
    while "state=ready" not in (status := pty.command("status")):
        assert time.monotonic() < end, f"not ready within {timeout} s: {status}"
        # A latched fault (the copper's read-backs, the lid switch, nSLEEP) is not left by
        # `clear` until its check passes again: on this healthy world it is a finding.
        assert "state=latched" not in status, f"a latched fault on a healthy world: {status}"
        if "state=fault" in status:
            pty.command("clear")
        time.sleep(0.1)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]
