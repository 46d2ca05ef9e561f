"""Shared fixtures: every test must leave no thread behind."""

from __future__ import annotations

import threading

import pytest

from launcher.core import config
from launcher.sim.rig import SimRig


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
