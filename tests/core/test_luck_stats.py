"""Statistical tests of press-your-luck, with fixed seeds and stated significance levels.

Each test fails if the observed figure is further from the configured one than a test
at alpha = 0.001 allows; with fixed seeds the outcome is deterministic, and a wrong curve
or size table shifts the figures far beyond the bounds.
"""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from launcher.core import config, luck
from launcher.sim.rig import SimRig

Z = 3.29  # two-sided normal quantile for alpha = 0.001


def chi2_critical(df: int, alpha_z: float = 3.09) -> float:
    """Upper 0.001 quantile of chi-square (Wilson-Hilferty; z = 3.09 for one-sided 0.001)."""
    return df * (1 - 2 / (9 * df) + alpha_z * math.sqrt(2 / (9 * df))) ** 3


@pytest.mark.parametrize("side", ["mild", "wild"])
def test_conditional_shot_chance_follows_the_hazard_curve(side):
    s = config.load().luck.side(side)
    rng = random.Random(2024)
    trials: Counter[int] = Counter()
    shots: Counter[int] = Counter()
    streak = 0
    for _ in range(60_000):
        n = luck.draw(s, streak, rng)
        trials[streak] += 1
        if n:
            shots[streak] += 1
            streak = 0
        else:
            streak += 1
    assert max(trials) == s.max_dry  # the streak never passes the cap
    for k, p in enumerate(s.hazard):
        n = trials[k]
        if p == 1.0:
            assert shots[k] == n
            continue
        bound = Z * math.sqrt(p * (1 - p) / n)
        assert abs(shots[k] / n - p) < bound, (k, shots[k] / n, p, bound)


@pytest.mark.parametrize("side", ["mild", "wild"])
def test_shot_sizes_follow_the_weights(side):
    s = config.load().luck.side(side)
    rng = random.Random(99)
    counts = Counter(luck.shot_size(s, rng) for _ in range(20_000))
    total = sum(s.weights)
    chi2 = sum(
        (counts[size] - 20_000 * w / total) ** 2 / (20_000 * w / total)
        for size, w in zip(s.sizes, s.weights, strict=True)
    )
    assert set(counts) <= set(s.sizes)
    assert chi2 < chi2_critical(len(s.sizes) - 1)


def test_a_wrong_curve_would_be_caught():
    """The bound above has power: a curve off by 0.05 falls outside it."""
    s = config.load().luck.mild
    rng = random.Random(2024)
    n = 10_000
    hits = sum(rng.random() < s.hazard[0] + 0.05 for _ in range(n))
    p = s.hazard[0]
    assert abs(hits / n - p) > Z * math.sqrt(p * (1 - p) / n)


def test_mild_defaults_shoot_about_35_percent_of_presses():
    assert luck.shot_rate(config.load().luck.mild) == pytest.approx(0.35, abs=0.01)
    assert luck.shot_rate(config.load().luck.wild) < luck.shot_rate(config.load().luck.mild)
    assert luck.mean_shot(config.load().luck.wild) > 2 * luck.mean_shot(config.load().luck.mild)


def test_through_the_firmware_the_shot_rate_matches_the_curve():
    """1,500 presses on the simulated launcher: rate within a renewal-process bound."""
    rig = SimRig(seed=11)
    rig.load([f"c{i}" for i in range(5000)])
    presses = 1500
    streak = longest = 0
    for _ in range(presses):
        if rig.press():
            streak = 0
        else:
            streak += 1
            longest = max(longest, streak)
    shots = rig.app.machine.memory.counters["shots"]  # (the event history is a ring)
    s = rig.settings.luck.mild
    rate = luck.shot_rate(s)
    # Presses per shot are i.i.d. (a renewal process): bound the mean of that cycle length.
    lengths = [k + 1 for k in range(len(s.hazard))]
    probs = []
    survive = 1.0
    for p in s.hazard:
        probs.append(survive * p)
        survive *= 1 - p
    mean = sum(n * q for n, q in zip(lengths, probs, strict=True))
    var = sum((n - mean) ** 2 * q for n, q in zip(lengths, probs, strict=True))
    observed_mean = presses / shots
    assert abs(observed_mean - mean) < Z * math.sqrt(var / shots), (observed_mean, mean)
    assert longest <= s.max_dry
    assert rig.faults == []
    assert abs(shots / presses - rate) < 0.05
    rig.close()
