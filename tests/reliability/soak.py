"""Random play for hours of simulated time on a ``SimRig``, with memory and timer samples.

A seeded player alternates sessions of play (presses, sometimes mashed, lid lifts, flips,
reloads, a jam now and then, cleared by a lid cycle) with breaks long enough to sleep, and
sometimes sends the unit to sleep and wakes it from the console. Every simulated
``sample_every`` seconds it records the traced Python memory (tracemalloc), the process's
resident set (``/proc/self/statm``) and the reactor's ``live_timers``.
"""

from __future__ import annotations

import gc
import os
import random
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from launcher.core import machine as m
from launcher.sim.rig import STEP, SimRig

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * PAGE


@dataclass
class Sample:
    at: float  # simulated seconds
    traced: int  # bytes tracemalloc sees allocated now
    rss: int
    live_timers: int


@dataclass
class SoakReport:
    hours: float
    samples: list[Sample] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    faults: list[dict[str, Any]] = field(default_factory=list)

    def quarter_means(self, attr: str) -> tuple[float, float]:
        """The mean of ``attr`` over the first and the last quarter of the samples."""
        values = [getattr(s, attr) for s in self.samples]
        q = max(1, len(values) // 4)
        return sum(values[:q]) / q, sum(values[-q:]) / q


class Player:
    """A seeded person at a simulated launcher."""

    def __init__(self, seed: int, keep: int) -> None:
        self.rng = random.Random(seed)
        self.rig = SimRig(seed=seed, keep=keep)
        self.loaded = 0  # every card ever put into the cartridge
        self.counts: dict[str, int] = {}
        self.jams_armed = 0
        self.hook: Callable[[], None] = lambda: None  # called as simulated time passes

    def wait(self, seconds: float) -> None:
        """Let time pass, in steps of at most a minute (so samples fall where they should)."""
        end = self.rig.now + seconds
        while self.rig.now < end:
            self.rig.advance(min(60.0, end - self.rig.now))
            self.hook()

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    # -- what a person does --

    def reload(self) -> None:
        """Lift the lid, fill the cartridge, close it, tell the firmware (``load``)."""
        rig, sim = self.rig, self.rig.sim
        sim.open_lid(full=False)
        rig.advance(STEP)
        n = self.rng.randint(20, 108)
        sim.load(f"card{self.loaded + i}" for i in range(n))
        self.loaded += n
        sim.close_lid()
        rig.advance(rig.settings.timing.debounce + STEP)
        rig.load_inventory(len(sim.cartridge))
        self.count("reloads")

    def press(self) -> None:
        self.rig.press()
        self.count("presses")

    def session(self) -> None:
        """A few minutes of play."""
        rig, rng = self.rig, self.rng
        for _ in range(rng.randint(20, 200)):
            if rig.state == m.FAULT:
                self.clear_fault()
            if not rig.sim.cartridge or rig.inventory == 0:
                self.reload()
            r = rng.random()
            if r < 0.80:
                self.press()
            elif r < 0.85:  # mashed: the second press is inside the guard
                rig.sim.press()
                rig.advance(0.05)
                self.press()
            elif r < 0.90:
                rig.flip()
                self.count("flips")
            elif r < 0.94:  # the lid lifted a little and put back
                rig.sim.open_lid(full=False)
                rig.advance(rng.uniform(0.05, 5.0))
                rig.sim.press()  # refused: lid open
                rig.sim.close_lid()
                rig.advance(rig.settings.timing.debounce + STEP)
                self.count("lid_lifts")
            elif r < 0.945:
                if not rig.sim.jammed:
                    rig.sim.jam()  # injected: the next card to leave sticks
                    self.jams_armed += 1
            else:
                self.wait(rng.uniform(0.5, 20.0))
            self.wait(rng.uniform(0.0, 3.0))

    def clear_fault(self) -> None:
        """As a person would: free the card, lift the lid and close it."""
        rig = self.rig
        rig.sim.clear_jam()
        rig.sim.open_lid(full=False)
        rig.advance(STEP)
        rig.sim.close_lid()
        rig.advance(rig.settings.timing.debounce + STEP)
        self.count("faults_cleared")

    def rest(self) -> None:
        """A break: minutes to an hour; long ones send the unit to sleep by itself."""
        rig, rng = self.rig, self.rng
        r = rng.random()
        if r < 0.2 and rig.state == m.READY:  # `sleep` on the console, later `wake`
            rig.app.sleep()
            self.wait(rng.uniform(1.0, 600.0))
            rig.app.wake()
            rig.advance(0)
            self.count("console_sleeps")
            return
        if r < 0.6:
            self.wait(rng.uniform(1.0, 120.0))
        elif r < 0.9:
            self.wait(rng.uniform(120.0, 900.0))  # past sleep_after (300 s) more often than not
        else:
            self.wait(rng.uniform(900.0, 3600.0))
        if rig.state == m.ASLEEP:
            self.press()  # the waking press
            self.count("wakes")

    def jams_caught(self) -> int:
        """The injected jams that have caught a card (one may still wait for a shot)."""
        waiting = self.rig.sim.jammed and self.rig.state != m.FAULT
        return self.jams_armed - (1 if waiting else 0)

    def cards_conserved(self) -> bool:
        sim = self.rig.sim
        in_beam = 1 if sim.in_beam is not None else 0
        return len(sim.cartridge) + sim.ejected_total + in_beam == self.loaded


def soak(hours: float, seed: int, keep: int = 1_000, samples: int = 24) -> SoakReport:
    """Play for ``hours`` of simulated time; ``samples`` memory/timer samples along the way.

    ``keep`` bounds the simulator's histories (motor samples, ejected cards, cues): small,
    so that they are full within the first quarter and later growth is real growth.
    """
    player = Player(seed, keep)
    rig = player.rig
    end = hours * 3600.0
    every = end / samples
    report = SoakReport(hours)
    gc.collect()
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    next_sample = [every]

    def sample() -> None:
        if rig.now >= next_sample[0] and len(report.samples) < samples:
            gc.collect()
            report.samples.append(Sample(rig.now, tracemalloc.get_traced_memory()[0],
                                         rss_bytes(), rig.reactor.live_timers))
            next_sample[0] += every

    player.hook = sample
    try:
        while rig.now < end:
            if player.rng.random() < 0.6:
                player.session()
            else:
                player.rest()
            assert player.cards_conserved()
            sample()
    finally:
        if not tracing:
            tracemalloc.stop()
    report.counts = dict(player.counts, jams_injected=player.jams_caught(),
                         cards_loaded=player.loaded, cards_shot=rig.sim.ejected_total)
    report.faults = list(rig.faults)
    rig.close()
    return report
