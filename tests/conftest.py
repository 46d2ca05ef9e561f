"""Shared fixtures: every test must leave no thread behind.

Under CI (``CI`` set) hypothesis runs derandomized: the same examples every run, so a red
build is reproducible. On a developer's machine it explores new examples each time and
keeps what failed in ``.hypothesis/``.
"""

from __future__ import annotations

import os
import threading

import pytest
from hypothesis import settings as hypothesis_settings

from launcher.core import config
from launcher.sim.rig import SimRig

hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")


@pytest.fixture(autouse=True)
def no_leaked_threads():
    """Fail a test that leaves a thread running (one that is ending gets 5 s to finish)."""
    before = set(threading.enumerate())
    yield
    leaked = [t for t in threading.enumerate() if t not in before]
    for t in leaked:
        t.join(timeout=5)
    alive = [t.name for t in leaked if t.is_alive()]
    assert not alive, f"test leaked threads: {alive}"


@pytest.fixture
def settings() -> config.Settings:
    return config.load()


@pytest.fixture
def rig():
    r = SimRig(seed=7)
    yield r
    r.close()
