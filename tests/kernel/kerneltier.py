"""Helpers of the kernel tier (conftest.py): the real firmware on the real lgpio, on gpio-sim.

These tests run only inside the VM that ``make test-kernel`` boots (.ci/kernel/run): it
loads gpio-sim, makes a 54-line chip the only /dev/gpiochip0, fakes a Pi 5 revision in
/proc/cpuinfo, and sets ``LAUNCHER_KERNEL_TIER=1`` and ``GPIOSIM_SYSFS``. Every test here
carries the ``kernel`` marker, which plain ``pytest`` deselects (pyproject addopts); asked
for outside the VM (``pytest -m kernel``), they fail with one line saying so.

The pieces: ``World`` is the simulated launcher's ONE physics model (hal.sim.SimLauncher)
on the gpio-sim pin port (hal.gpiosim.GpioSimPins), on a real reactor on a thread of this
process; ``Firmware`` is ``launcher run --config FILE`` started as systemd would
(NOTIFY_SOCKET, WATCHDOG_USEC, the working directory on a tmpfs), with its log lines and
notifications recorded with their wall times.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hal.gpiosim import GpioSimPins
from hal.sim import Physics, SimLauncher
from launcher.core import config
from launcher.core.reactor import RealReactor

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
IN_VM = os.environ.get("LAUNCHER_KERNEL_TIER") == "1" and bool(os.environ.get("GPIOSIM_SYSFS"))
SYSFS = Path(os.environ.get("GPIOSIM_SYSFS", "/nonexistent"))
LAUNCHER = Path(sys.executable).with_name("launcher")
PINS = config.load().pins
RESULTS = Path(os.environ.get("KERNEL_RESULTS", "/tmp/kernel-results"))


def record(name: str, **figures: Any) -> None:
    """Keep a measured figure for docs/kernel-tier.md (tests/kernel/report.py)."""
    import json

    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(figures, indent=1, sort_keys=True))


# -- the chip, as the outside world sees it ----------------------------------------------------

def value(number: int) -> int:
    """A line's level now, from gpio-sim's ``value`` file."""
    return int((SYSFS / f"sim_gpio{number}" / "value").read_text().strip())


def levels(*names: str) -> dict[str, int]:
    return {name: value(getattr(PINS, name)) for name in names}


OUTPUTS = ("motor_sleep", "motor_in1", "motor_in2", "rotator")


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


# -- the world around the firmware: the one physics model on gpio-sim ---------------------------

class World:
    """SimLauncher on GpioSimPins, its reactor on a thread; verbs go through ``do``."""

    def __init__(self, side: str = "mild", cards: int = 60) -> None:
        self.reactor = RealReactor()
        self.port = GpioSimPins(SYSFS, self.reactor)
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

EVENT = re.compile(r"launcher(?:\.\w+)*: (\w+)((?: \w+=\S*)*)\s*$")


class Firmware:
    """``launcher run --config FILE`` (or the hang harness), started as systemd would."""

    def __init__(self, folder: Path, *, toml: str = "", watchdog_usec: int | None = None,
                 harness: bool = False, seed: int = 1, console_port: str = "") -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.config = folder / "launcher.toml"
        self.config.write_text(_config(folder, seed, console_port) + toml)
        self.notify_path = folder / "notify.sock"
        self.notify_path.unlink(missing_ok=True)
        self._notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._notify.bind(str(self.notify_path))
        self._notify.settimeout(0.1)
        self.notifications: list[tuple[float, str]] = []
        self.lines: list[tuple[float, str]] = []
        self.events: list[tuple[float, str, dict[str, str]]] = []
        self._cv = threading.Condition()
        env = dict(os.environ, NOTIFY_SOCKET=str(self.notify_path), PYTHONUNBUFFERED="1")
        env.pop("WATCHDOG_PID", None)
        if watchdog_usec is not None:
            env["WATCHDOG_USEC"] = str(watchdog_usec)
        else:
            env.pop("WATCHDOG_USEC", None)
        argv = ([sys.executable, str(HERE / "harness.py")] if harness else [str(LAUNCHER)])
        argv += ["run", "--config", str(self.config)]
        cwd = os.environ.get("LG_WD", str(folder))  # the unit's WorkingDirectory, on a tmpfs
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
                data = self._notify.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            with self._cv:
                for field in data.decode().splitlines():
                    self.notifications.append((time.monotonic(), field))
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
        self.wait_for(lambda: any(f == "READY=1" for _, f in self.notifications), timeout,
                      "READY=1")

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

    def hang(self) -> float:
        """SIGUSR1 to the hang harness; the wall time its handler said the hang began."""
        mark = len(self.lines)
        self.proc.send_signal(signal.SIGUSR1)

        def said() -> Any:
            return next((t for t, line in self.lines[mark:] if "reactor thread hangs" in line),
                        None)
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
"""


def safe_stop(fw: Firmware) -> tuple[float, float, str]:
    """``launcher safe-stop --config FILE`` as ExecStopPost runs it: (start, end, output)."""
    start = time.monotonic()
    out = subprocess.run([str(LAUNCHER), "safe-stop", "--config", str(fw.config)],
                         cwd=os.environ.get("LG_WD"), capture_output=True, text=True,
                         timeout=60, check=False)
    end = time.monotonic()
    assert out.returncode == 0, out.stdout + out.stderr
    return start, end, out.stdout + out.stderr


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


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]
