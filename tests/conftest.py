"""Shared fixtures: every test must leave no thread behind, nor see the user's environment.

Under CI (``CI`` set) hypothesis runs derandomized: the same examples every run, so a red
build is reproducible. On a developer's machine it explores new examples each time and
keeps what failed in ``.hypothesis/``.
"""

from __future__ import annotations

import importlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import settings as hypothesis_settings
from isolation import Leftovers

from launcher.core import config
from launcher.sim.rig import SimRig

pytest_plugins = ["pytester"]  # tests/test_isolation.py runs the suite's fixtures on a test

hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")


# Variables that change which pins, daemon or service manager the code under test talks to.
# A developer with ``GPIOZERO_PIN_FACTORY=mock`` exported (or a shell inside a systemd unit)
# must get the same results as CI: each test starts without them, and sets what it needs.
ENV_PREFIXES = ("GPIOZERO_", "LAUNCHER_")
ENV_NAMES = ("PIGPIO_ADDR", "PIGPIO_PORT", "LG_WD", "NOTIFY_SOCKET", "WATCHDOG_USEC",
             "WATCHDOG_PID")


def ambient_names(environ: Mapping[str, str]) -> list[str]:
    """The variables of ``environ`` that the suite clears before each test."""
    return sorted(k for k in environ if k in ENV_NAMES or k.startswith(ENV_PREFIXES))


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Clear the pin-factory, pigpio, lgpio, systemd and launcher variables for each test."""
    for name in ambient_names(os.environ):
        monkeypatch.delenv(name)


LEFTOVERS = Leftovers()
logging.getLogger().addHandler(LEFTOVERS.handler)


@pytest.fixture(autouse=True)
def no_leaked_threads(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test that leaves a thread running (one that is ending gets 5 s to finish), and
    a test during which a thread that an earlier test left running writes a log record
    (tests/isolation.py)."""
    before = set(threading.enumerate())
    yield
    alive = LEFTOVERS.threads_left(before, request.node.nodeid)
    late = LEFTOVERS.late_records()
    assert not alive, f"test leaked threads: {alive}"
    assert not late, "log records from a thread of an earlier test:\n" + "\n".join(late)


# A suite started in the background by a shell without job control (`make test &`, nohup,
# some CI runners) begins with SIGINT ignored, and every program a test starts inherits
# that: Ctrl-C would not stop `simulate`, nor `make play`, and the tests of it would wait
# out their bound. A person's shell starts a job with SIGINT at its default; so does this.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The signals a terminal or a service manager sends. Their dispositions pass to every process
# a later test starts: one left ignored (as the forkserver's worker module, or play after
# Ctrl-C, sets SIGINT) makes every Ctrl-C test after it hang until its bound.
WATCHED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE)


@pytest.fixture(autouse=True)
def signals_as_found() -> Iterator[None]:
    """Fail a test that leaves a signal's handler changed, naming it, and put it back."""
    before = {s: signal.getsignal(s) for s in WATCHED_SIGNALS}
    yield
    changed = [f"{s.name}: {before[s]!r} -> {signal.getsignal(s)!r}" for s in WATCHED_SIGNALS
               if signal.getsignal(s) != before[s]]
    for s in WATCHED_SIGNALS:
        signal.signal(s, before[s])
    assert not changed, "test left signal handlers changed: " + "; ".join(changed)


@pytest.fixture
def settings() -> config.Settings:
    return config.load()


@pytest.fixture
def rig():
    r = SimRig(seed=7)
    yield r
    r.close()


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], ModuleType]:
    """``bench("NAME")``: the module ``bench.NAME`` from this checkout (bench/ is not
    installed), whatever ran before: a ``bench`` found first as tests/bench, a folder
    without ``__init__``, is forgotten."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1]))
    if getattr(sys.modules.get("bench"), "__file__", None) is None:
        monkeypatch.delitem(sys.modules, "bench", raising=False)
    return lambda name: importlib.import_module(f"bench.{name}")
