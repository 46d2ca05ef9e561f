"""The firmware's own ``main`` with faults the kernel tier injects (test-only code).

- **SIGUSR1 hangs the reactor now.** Python runs signal handlers on the main thread, which
  is the reactor's (``launcher run`` turns the loop there), so a handler that sleeps stops
  every timer, the watchdog's ping included, while lgpio's threads (its PWM and its edge
  callbacks) and the actuators' guard go on.
- **SIGUSR2 hangs the reactor inside the actuators' next tick** (``Actuators._tick``, the
  lease's renewal, every quarter lease while the roller runs). Where the actuators have a
  lock (``_lock``, the firmware before issue 34), the hang holds it, as a hang anywhere in
  the tick's body would: what the lid stop and the guard then do is the test.
- **HARNESS_RAISE=1**: one more subscriber of the lid-closed contact, added once the
  firmware has started, raises on the first edge of the lid leaving closed, on lgpio's
  thread. (A firmware without ``Input.subscribe`` gets the raise from its own lid callback,
  after that callback ran: the single subscriber ``on_change`` keeps.)

Every Python thread of the process also gives its name to the kernel (its ``comm``, which
the kernel's trace of each write shows, lines.GpioTrace): lgpio's notification
thread is ``lgpio-callback``, the actuators' guard ``actuators-guard``; so a test sees
which thread wrote a stop.

``HANG_S`` sets how long a hang lasts (default 30 s: longer than any watchdog the tests
give). Each fault says when it begins and ends on stderr (``harness: ...``), so the tests
time it from when it really began. A name that is gone fails the start (patching.py).

Usage: python tests/kernel/harness.py run --config FILE
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from patching import replace

from launcher.cli.main import main

HUNG = "harness: the reactor thread hangs now"
RESUMED = "harness: the reactor thread runs again"
RAISED = "harness: a lid_closed subscriber raises now"
HANG_S = float(os.environ.get("HANG_S", "30"))


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def hang(where: str = "") -> None:
    say(HUNG + where)  # said first: a loaded VM can take tens of ms to run a handler
    time.sleep(HANG_S)
    say(RESUMED)


def hang_now(signum: int, frame: object) -> None:
    hang()


_tick_hang = []  # armed by SIGUSR2: the next tick hangs


def arm_tick_hang(signum: int, frame: object) -> None:
    _tick_hang.append(signum)


def hanging_tick(original):
    def _tick(self, eventtime):
        if _tick_hang:
            _tick_hang.clear()
            lock = getattr(self, "_lock", None)
            with lock if lock is not None else contextlib.nullcontext():
                hang(" (inside Actuators._tick" + (", holding its lock)" if lock else ")"))
        return original(self, eventtime)
    return _tick


LGPIO_THREAD = "lgpio-callback"  # kerneltier.LGPIO_THREAD


def naming_threads(original):
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    PR_SET_NAME = 15  # linux/prctl.h

    def _bootstrap_inner(self):
        name = LGPIO_THREAD if type(self).__name__ == "_callback_thread" else self.name
        prctl(PR_SET_NAME, name.encode()[:15], 0, 0, 0)
        return original(self)
    return _bootstrap_inner


class Raiser:
    """A lid-closed subscriber that raises once, on the lid's first leaving closed."""

    def __init__(self) -> None:
        self.raised = False

    def __call__(self, active: bool) -> None:
        if not active and not self.raised:
            self.raised = True
            say(RAISED)
            raise RuntimeError("harness: a lid_closed subscriber failed")


def raising_start(original):
    def start(self):
        lid = self.board.lid_closed
        raiser = Raiser()
        if hasattr(lid, "subscribe"):
            original(self)
            lid.subscribe(raiser)
            return
        on_change = lid.on_change  # the firmware before issue 34: one subscriber

        def chained(callback):
            if callback is None:
                return on_change(None)

            def both(active):
                callback(active)
                raiser(active)
            return on_change(both)

        lid.on_change = chained
        original(self)
    return start


if __name__ == "__main__":
    signal.signal(signal.SIGUSR1, hang_now)
    signal.signal(signal.SIGUSR2, arm_tick_hang)
    replace("threading", "Thread._bootstrap_inner", naming_threads)
    replace("launcher.firmware.actuators", "Actuators._tick", hanging_tick)
    if os.environ.get("HARNESS_RAISE") == "1":
        replace("launcher.firmware.app", "Launcher.start", raising_start)
    sys.exit(main(sys.argv[1:]))
