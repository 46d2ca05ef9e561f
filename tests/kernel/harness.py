"""The firmware's own ``main``, with one test hook: SIGUSR1 hangs the reactor.

Python runs signal handlers on the main thread, which is the reactor's (``launcher run``
turns the loop there), so a handler that sleeps stops every timer, the watchdog's ping
included, while lgpio's threads (its PWM and its edge callbacks) go on. ``HANG_S`` sets
how long (default 30 s: longer than any watchdog the tests give).

Usage: python tests/kernel/harness.py run --config FILE
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from launcher.cli.main import main

HUNG = "harness: the reactor thread hangs now"


def hang(signum: int, frame: object) -> None:
    # Said first, so the test times the hang from when it really began (a loaded VM can
    # take tens of ms to run a signal handler).
    print(HUNG, file=sys.stderr, flush=True)
    time.sleep(float(os.environ.get("HANG_S", "30")))


if __name__ == "__main__":
    signal.signal(signal.SIGUSR1, hang)
    sys.exit(main(sys.argv[1:]))
