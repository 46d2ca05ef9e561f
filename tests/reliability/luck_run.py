"""Seeded presses through the firmware's own decision path, and chi-square tests of them.

``FirmwarePresses`` runs the pure ``Machine`` as the shell does: each press goes through
``Launcher.press`` itself (``machine.luck_wanted``, then ``DryStreak.draw`` with the
injected generator, then ``machine.handle(Event(PRESS, drawn))``), and each shot is
finished with the exit beam's events, one blocked/clear pair a card, as the simulated
board would send them. Nothing here re-implements a rule: what is counted is read from
the machine's own ``dry`` and ``shoot`` events.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from scipy import stats

from launcher.core import machine as m
from launcher.core.config import Settings, SideLuck
from launcher.firmware.app import Launcher

ALPHA = 0.001  # significance level of every test here (fixed seeds: the outcome is fixed)


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


@dataclass
class Tally:
    """What the machine said over a run of presses on one side."""

    presses: int = 0
    # Presses seen at each dry streak (the streak before the press) and the shots among them.
    at_streak: Counter[int] = field(default_factory=Counter)
    shots_at_streak: Counter[int] = field(default_factory=Counter)
    sizes: Counter[int] = field(default_factory=Counter)
    # Dry presses before each shot (the renewal gaps, i.i.d.); its maximum is the cap seen.
    streak_before_shot: Counter[int] = field(default_factory=Counter)
    max_streak: int = 0

    @property
    def shots(self) -> int:
        return sum(self.sizes.values())


class FirmwarePresses:
    """A pure ``Machine`` driven by ``Launcher.press``: the firmware's draw, nothing else."""

    def __init__(self, settings: Settings, side: str, seed: int) -> None:
        self.machine = m.Machine(m.MachineSettings.of(settings), m.Memory(side=side))
        self.reactor = _Clock()
        self.rng = random.Random(seed)
        self.step = settings.timing.mash_guard + 0.001  # presses just clear of the mash guard
        self.heard: list[tuple[str, dict[str, Any]]] = []
        self.machine.start(m.Inputs(yellow_back=side == "mild"), self.reactor.now)
        assert self.machine.state is m.READY

    # What ``Launcher.press`` uses of its instance: machine, reactor, rng and dispatch.
    def dispatch(self, event: m.Event, now: float | None = None) -> None:
        for c in self.machine.handle(event, self.reactor.now if now is None else now):
            if c.kind is m.Cmd.EMIT:
                self.heard.append((c.arg, c.fields()))

    def press(self) -> tuple[str, dict[str, Any]]:
        """One press, and the shot finished by the beam; the machine's ``dry``/``shoot``."""
        self.reactor.now += self.step
        self.heard.clear()
        streak = self.machine.memory.dry_streak
        Launcher.press(self)  # type: ignore[arg-type]  # the firmware's own press, verbatim
        outcome = next((k, d) for k, d in self.heard if k in ("dry", "shoot"))
        while self.machine.state is m.SHOOTING:
            self.dispatch(m.Event(m.BEAM_BLOCKED))
            self.dispatch(m.Event(m.BEAM_CLEAR))
        assert self.machine.state is m.READY, self.machine.state
        return outcome[0], {**outcome[1], "before": streak}

    def run(self, presses: int) -> Tally:
        t = Tally()
        for _ in range(presses):
            kind, data = self.press()
            k = data["before"]
            t.presses += 1
            t.at_streak[k] += 1
            t.max_streak = max(t.max_streak, k)
            if kind == "shoot":
                t.shots_at_streak[k] += 1
                t.sizes[data["cards"]] += 1
                t.streak_before_shot[k] += 1
        return t


# -- the model the configuration states, and the tests against it --


def gap_probabilities(side: SideLuck) -> list[float]:
    """P(a shot comes after exactly k dry presses), k = 0 .. max_dry."""
    out, survive = [], 1.0
    for h in side.hazard:
        out.append(survive * h)
        survive *= 1.0 - h
    return out


@dataclass(frozen=True)
class Result:
    name: str
    statistic: float
    df: int
    p: float

    def __str__(self) -> str:
        return f"{self.name}: chi2={self.statistic:.2f} df={self.df} p={self.p:.4f}"


def hazard_test(t: Tally, side: SideLuck) -> Result:
    """Shot frequency at each dry streak against the hazard curve (levels with 0 < h < 1).

    Given the streak, each press's draw is a fresh Bernoulli(h[k]): the sum over levels
    of (shots - n h)^2 / (n h (1 - h)) is chi-square with one degree of freedom a level.
    """
    stat, df = 0.0, 0
    for k, h in enumerate(side.hazard):
        n = t.at_streak[k]
        if not 0.0 < h < 1.0 or n == 0:
            continue
        stat += (t.shots_at_streak[k] - n * h) ** 2 / (n * h * (1.0 - h))
        df += 1
    return Result("shot frequency by streak", stat, df, float(stats.chi2.sf(stat, df)))


def gap_test(t: Tally, side: SideLuck) -> Result:
    """The dry streak before each shot (0 .. the cap) against the curve's distribution."""
    probs = gap_probabilities(side)
    observed = [t.streak_before_shot[k] for k in range(len(probs))]
    n = sum(observed)
    res = stats.chisquare(observed, [n * p for p in probs])
    return Result("dry-streak distribution", float(res.statistic), len(probs) - 1,
                  float(res.pvalue))


def size_test(t: Tally, side: SideLuck) -> Result:
    total = sum(side.weights)
    observed = [t.sizes[s] for s in side.sizes]
    n = sum(observed)
    res = stats.chisquare(observed, [n * w / total for w in side.weights])
    return Result("shot sizes", float(res.statistic), len(side.sizes) - 1, float(res.pvalue))


def rate_test(t: Tally, side: SideLuck) -> Result:
    """The long-run shot frequency: presses per shot (the i.i.d. renewal gaps) by a z-test.

    Reported as chi-square with one degree of freedom (z squared) for uniformity.
    """
    probs = gap_probabilities(side)
    mean = sum((k + 1) * p for k, p in enumerate(probs))
    var = sum((k + 1) ** 2 * p for k, p in enumerate(probs)) - mean**2
    n = sum(t.streak_before_shot.values())
    seen = sum((k + 1) * c for k, c in t.streak_before_shot.items()) / n
    z = (seen - mean) / math.sqrt(var / n)
    return Result("presses per shot", z * z, 1, float(stats.chi2.sf(z * z, 1)))


def all_tests(t: Tally, side: SideLuck) -> list[Result]:
    return [hazard_test(t, side), rate_test(t, side), gap_test(t, side), size_test(t, side)]
