"""Shared fixtures: every test must leave no thread behind."""

from __future__ import annotations

import threading

import pytest

from launcher import config
from launcher.rig import SimRig


@pytest.fixture(autouse=True)
def no_leaked_threads():
    before = set(threading.enumerate())
    yield
    leaked = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    assert not leaked, f"test leaked threads: {leaked}"


@pytest.fixture
def settings() -> config.Settings:
    return config.load()


@pytest.fixture
def rig():
    r = SimRig(seed=7)
    yield r
    r.close()
