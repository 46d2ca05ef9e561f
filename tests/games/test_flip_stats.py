"""Statistical tests with fixed seeds: the launchers follow the luck tables, bots differ."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from launcher.core import config, luck
from launcher.core.config import SideLuck
from launcher.games.cards import MILD, WILD, load_deck
from launcher.games.flip_attack.bots import HeuristicBot, RandomBot
from launcher.games.flip_attack.table import FlipAttackTable
from launcher.games.launchers import DirectLauncher
from launcher.games.stats import chi_square, chi_square_sf
from launcher.sim.games import FirmwareLauncher

ALPHA = 1e-3  # a fixed-seed test that fails this is far off, not unlucky
DECK = load_deck()


def run_lengths(side: SideLuck) -> list[float]:
    """Exact P(k dry presses before a shot), k = 0..max_dry, from the hazard curve."""
    out, survive = [], 1.0
    for p in side.hazard:
        out.append(survive * p)
        survive *= 1.0 - p
    return out


def press(launcher, n: int) -> tuple[Counter[int], Counter[int], int]:
    """Press ``n`` times, topping the cartridge up; (dry runs before shots, shot sizes, shots)."""
    runs: Counter[int] = Counter()
    sizes: Counter[int] = Counter()
    streak = shots = 0
    for _ in range(n):
        if launcher.cards_left < 15:
            launcher.load(DECK[:60])
        out = launcher.press()
        if out:
            runs[streak] += 1
            sizes[len(out)] += 1
            shots += 1
            streak = 0
        else:
            streak += 1
    return runs, sizes, shots


def test_chi_square_sf_matches_table_values():
    assert chi_square_sf(3.841, 1) == pytest.approx(0.05, abs=1e-4)
    assert chi_square_sf(18.467, 4) == pytest.approx(0.001, abs=1e-5)
    assert chi_square_sf(124.342, 100) == pytest.approx(0.05, abs=1e-4)
    stat, df, p = chi_square([30, 70], [0.5, 0.5])
    assert (stat, df) == (16.0, 1) and p == pytest.approx(6.3e-5, rel=0.01)


@pytest.mark.parametrize("side_name", [MILD, WILD])
def test_direct_launcher_shot_rate_is_the_configured_one(side_name):
    settings = config.load()
    side = settings.luck.side(side_name)
    launcher = DirectLauncher(settings.luck, random.Random(2024))
    if side_name == WILD:
        launcher.flip()
    n = 40_000
    runs, sizes, shots = press(launcher, n)
    # Presses per shot are independent renewals: the shot count is normal around n/mu with
    # variance n*var/mu^3 (renewal central limit theorem).
    probs = run_lengths(side)
    mu = sum((k + 1) * p for k, p in enumerate(probs))
    var = sum((k + 1 - mu) ** 2 * p for k, p in enumerate(probs))
    assert mu == pytest.approx(1 / luck.shot_rate(side))
    z = (shots - n / mu) / math.sqrt(n * var / mu**3)
    assert abs(z) < 3.3, f"shot rate {shots / n:.4f} vs {luck.shot_rate(side):.4f} (z={z:.2f})"
    # The whole distributions, not just the means.
    assert_follows_tables(side, runs, sizes)


def assert_follows_tables(side, runs, sizes) -> None:
    """Dry runs before each shot and shot sizes both pass a chi-square test at ALPHA."""
    probs = run_lengths(side)
    _, _, p_runs = chi_square([runs[k] for k in range(len(probs))], probs)
    assert p_runs > ALPHA
    total = sum(side.weights)
    _, _, p_sizes = chi_square([sizes[s] for s in side.sizes],
                               [w / total for w in side.weights])
    assert p_sizes > ALPHA


@pytest.mark.parametrize("side_name", [MILD, WILD])
def test_firmware_launcher_draws_from_the_same_tables(side_name):
    settings = config.load()
    side = settings.luck.side(side_name)
    launcher = FirmwareLauncher(settings, seed=99)
    try:
        if side_name == WILD:
            assert launcher.flip() == WILD
        runs, sizes, _ = press(launcher, 2500)
        assert launcher.faults == []
    finally:
        launcher.close()
    assert_follows_tables(side, runs, sizes)


def test_heuristic_bot_beats_random_bot_heads_up():
    rng = random.Random(11)
    wins = hands = 0
    for seat in (0, 1):
        bots = [RandomBot(random.Random(rng.random())), RandomBot(random.Random(rng.random()))]
        bots[seat] = HeuristicBot(random.Random(rng.random()))
        table = FlipAttackTable(DirectLauncher(rng=random.Random(rng.random())), bots, rng)
        for h in range(100):
            hand = table.play_hand(dealer=h % 2)
            if hand.winner is not None:
                hands += 1
                wins += hand.winner == seat
    # One-sided binomial test against an even match.
    p = sum(math.comb(hands, k) for k in range(wins, hands + 1)) / 2**hands
    assert p < ALPHA, f"heuristic won {wins} of {hands} hands"
