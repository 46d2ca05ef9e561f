"""Press your luck, measured through the firmware's own press path against the configured model.

Every press goes through ``Launcher.press`` on a pure ``Machine`` (see ``luck_run``), with a
fixed seed per side. Four chi-square tests per side at alpha = 0.001 (``ALPHA``): the shot
frequency at each dry streak (the hazard curve), the long-run presses per shot, the
distribution of the dry streak before a shot (with the cap never passed and reached), and
the shot sizes. The default run uses 20,000 presses a side; the slow tier 200,000. The
p-values are printed (``pytest -s``) and recorded as test properties.
"""

from __future__ import annotations

import dataclasses
from functools import cache

import pytest
from luck_run import ALPHA, FirmwarePresses, Tally, all_tests, hazard_test, size_test

from launcher.core import config
from launcher.core.config import SideLuck

SEEDS = {"mild": 20_251, "wild": 20_252}


@cache
def _tally(side: str, presses: int) -> Tally:
    return FirmwarePresses(config.load(), side, SEEDS[side]).run(presses)


def _check(side: str, presses: int, record_property) -> Tally:
    luck = config.load().luck.side(side)
    t = _tally(side, presses)
    assert t.presses == presses
    # The cap: the streak never passes max_dry, and a press at the cap always shoots.
    assert t.max_streak == luck.max_dry
    assert t.shots_at_streak[luck.max_dry] == t.at_streak[luck.max_dry] > 0
    assert set(t.sizes) <= set(luck.sizes)
    results = all_tests(t, luck)
    for r in results:
        print(f"{side} {presses} presses, {t.shots} shots: {r}")
        record_property(f"{side}.{r.name}", f"chi2={r.statistic:.3f} df={r.df} p={r.p:.4f}")
    failed = [str(r) for r in results if r.p < ALPHA]
    assert not failed, f"{side}: rejected at alpha={ALPHA}: {failed}"
    return t


@pytest.mark.parametrize("side", ["mild", "wild"])
def test_the_firmware_presses_follow_the_configured_model(side: str, record_property) -> None:
    _check(side, 20_000, record_property)


@pytest.mark.slow
@pytest.mark.parametrize("side", ["mild", "wild"])
def test_200000_presses_a_side_follow_the_configured_model(side: str, record_property) -> None:
    _check(side, 200_000, record_property)


def _shifted(luck: SideLuck, dh: float) -> SideLuck:
    hazard = (min(luck.hazard[0] + dh, 1.0), *luck.hazard[1:])
    return dataclasses.replace(luck, hazard=hazard)


@pytest.mark.parametrize("side", ["mild", "wild"])
def test_the_tests_have_power_against_a_slightly_wrong_model(side: str) -> None:
    """The same 20,000 presses reject a first hazard off by 0.05, or swapped size weights."""
    luck = config.load().luck.side(side)
    t = _tally(side, 20_000)
    assert hazard_test(t, _shifted(luck, 0.05)).p < ALPHA
    reversed_weights = dataclasses.replace(luck, weights=tuple(reversed(luck.weights)))
    assert size_test(t, reversed_weights).p < ALPHA


def test_the_driver_goes_through_the_firmware_press() -> None:
    """A press inside the mash guard draws nothing and says only that it was ignored:
    ``Launcher.press`` asks ``luck_wanted`` before it draws, and the driver has no draw of
    its own."""
    from launcher.firmware.app import Launcher

    run = FirmwarePresses(config.load(), "mild", 1)
    kind, _ = run.press()
    assert kind in ("dry", "shoot")
    state = run.rng.getstate()
    run.heard.clear()
    run.reactor.now += 0.01  # well inside the 250 ms mash guard
    Launcher.press(run)  # type: ignore[arg-type]
    assert run.rng.getstate() == state
    assert run.heard == [("press_ignored", {"reason": "mashed"})]
