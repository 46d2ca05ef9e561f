"""The layer campaign (``bench/faults.py``): one fault at a time in a pin call or a thread,
and every safety layer holds. The fast tier here; the full one in ``make test-slow``; its
kept results render SAFETY.md's rows (tests/docs/test_generated.py)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from hal.base import SAFE_ORDER, Board

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def faults(bench: Callable[[str], ModuleType]) -> ModuleType:
    return bench("faults")


@pytest.fixture(autouse=True)
def quiet() -> Iterator[None]:
    logging.disable(logging.CRITICAL)  # each run logs its fault's traceback, as it must
    yield
    logging.disable(logging.NOTSET)


def covers(faults: ModuleType, r: dict) -> None:
    assert set(r["pins"]) >= {"motor_sleep", "motor_in1", "motor_in2", "rotator", "lid_closed",
                              "lid_open"}
    assert set(r["moments"]) == {*faults.MOMENTS, "the self-test pulse"}
    assert set(r["by_thread"]) == {"reactor", "pin callback", "guard", "death"}
    assert r["by_thread"]["death"] == len(r["wirings"]) * len(faults.DEATHS) * len(
        faults.MOMENTS) + 1
    assert r["fired"] >= 0.95 * r["injected"]


def test_the_fast_campaign_finds_every_layer_holding(faults):
    r = faults.campaign("fast")
    covers(faults, r)
    assert r["failures"] == [] and r["held"] == r["injected"]
    assert r["roller_worst_ms"] <= r["lease_ms"] and r["turn_worst_ms"] <= r["lease_ms"]
    # A hung reactor's roller is stopped by its lease, not before (nothing else can).
    assert 0.5 * r["lease_ms"] < r["hang_worst_ms"] <= r["lease_ms"]


def test_the_campaign_fails_a_stop_that_gives_up_at_the_first_pin(faults, monkeypatch):
    """The check can fail: a drive_safe that stops at its first failed write (today's
    review finding, in one line) is caught on the pin callback thread."""
    def first_failure_ends_it(self: Board) -> list:
        failed = []
        for part, _ in SAFE_ORDER:
            device = getattr(self, part)
            if device is None:
                continue
            try:
                device.stop(brake=False) if part == "motor" else device.off()
            except Exception as exc:
                failed.append((part, exc))
                break
        return failed

    monkeypatch.setattr(Board, "drive_safe", first_failure_ends_it)
    r = faults.campaign("fast")
    assert any("pin callback" in f and "left driven by a layer on its own {'pin" in f
               for f in r["failures"])


def test_the_campaign_fails_a_guard_that_an_exception_ends(faults, monkeypatch):
    from launcher.firmware.actuators import Actuators

    def unguarded(self: Actuators, now: float) -> float:
        self._check(now, renew=False)
        return self._next_check(now)

    monkeypatch.setattr(Actuators, "expire", unguarded)
    r = faults.campaign("fast")
    assert any("threads ended by it ['guard']" in f for f in r["failures"])


def test_the_kept_results_are_a_full_run_that_held(faults):
    r = json.loads((ROOT / "docs" / "results" / "layer_faults.json").read_text())
    assert r["tier"] == "full" and r["command"] == faults.COMMAND
    covers(faults, r)
    assert r["failures"] == [] and r["held"] == r["injected"] and len(r["wirings"]) == 3


@pytest.mark.slow
def test_the_full_campaign_finds_every_layer_holding(faults):
    r = faults.campaign("full")
    covers(faults, r)
    assert r["failures"] == []
