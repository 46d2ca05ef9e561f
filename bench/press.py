"""A press through the real firmware: latency to the pin writes, and the CPU it costs.

The firmware is built as ``launcher run`` builds it (``build_app``: ``Actuators``, the cue
player on the stock audio setting, ``auto``, and ``StateStore`` with its writer thread and
a real state file), on the simulated board. Every output pin is watched at its write: a
stamp is taken the moment the mock pin's level changes, before the simulator's physics
hears of it (that physics is the simulator's cost, not the firmware's, and is taken out).

Two measurements:

- **latency** (``run``): a ``RealReactor`` on its own thread, as in ``launcher run``; the
  main thread plays the pin library's thread: it drives the button's mock pin low
  (gpiozero calls the firmware's edge callback on the driving thread, which posts to the
  reactor) and times, in wall time,
  - edge -> motor: the write of IN1's duty (the pin, not the call of ``forward``);
  - edge -> audio: the speaker's ``play`` (the stock backend: here no sound device, so
    ``auto`` falls back to the null speaker; the call is timed all the same);
  - lid leaving closed -> motor stop, with the roller stalled so the motor is running:
    the first write that stops it (nSLEEP low, or IN1 low);
  - edge -> the reactor thread running the edge (the thread hand-over) and from there to
    the IN1 write (the firmware's own handling).
- **CPU** (``cpu``): the firmware's handling of one press on one thread (a manual reactor
  moved on as real time passes), from the posted edge to the last pin write the press
  makes, in CPU time of the thread (``time.thread_time_ns``), the simulator's physics
  subtracted.

Presses come at ``fast`` gaps (about 8 ms apart: caches warm, a mash) or ``human`` gaps
(80-400 ms from one press to the next, drawn uniformly: caches cold, as a hand presses).
Every press shoots one card (both sides' hazard curves are ``[1.0]``), so each press has a
motor command and a BAM cue. Each run checks that it measured what it says: an IN1 write
per press, every press accepted (the firmware's own counters: presses, shots, cards shot)
and a state file written.

    python -m bench.press [--presses 5000] [--lids 500] [--gaps fast|human]
                          [--slow-store] [--gc runner|default] [--log info|warning]
    python -m bench.press --cpu [--presses 200] [--gaps human]

It prints one JSON object (the suite runs it in a fresh process per run).
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hal.sim import Physics, SimLauncher, SimPin
from launcher.core import config, machine
from launcher.core.reactor import ManualReactor, Reactor, RealReactor
from launcher.firmware.app import Launcher, build_app
from launcher.firmware.disk import atomic_write
from launcher.firmware.state import StateStore

SLOW_SAVE = 0.2  # s a save takes with --slow-store
WAIT = 1.0  # s: a press whose command has not come by then is a failure
HUMAN_GAPS = (0.08, 0.4)  # s from one press to the next, as a hand presses
FAST_HOLD, FAST_REST = 0.002, 0.004  # s: the fast presses' hold and rest (about 8 ms a press)
OUTPUTS = ("motor_in1", "motor_in2", "motor_sleep", "rotator", "rotator_in2", "amp_enable",
           "led", "deadman")


class Stamp:
    """The time of the first note after ``arm``; ``hit`` is set then."""

    def __init__(self) -> None:
        self.at = 0.0
        self.hit = threading.Event()

    def arm(self) -> None:
        self.hit.clear()

    def note(self) -> None:
        if not self.hit.is_set():
            self.at = time.perf_counter()
            self.hit.set()

    def since(self, t0: float) -> float:
        if not self.hit.wait(WAIT):
            raise RuntimeError("no command within 1 s of the edge")
        return self.at - t0


@dataclass
class PinWatch:
    """Every write to an output pin, stamped as the level changes, before the physics runs.

    ``writes`` counts the writes per config name; ``last_cpu`` is the thread CPU time (ns)
    of the newest write, and ``physics_ns`` the CPU the simulator's physics took in its
    listeners (the part of a write that is not the firmware's).
    """

    names: dict[int, str]
    writes: dict[str, int] = field(default_factory=dict)
    last_cpu: int = 0
    physics_ns: int = 0
    on_write: Callable[[str, float], None] | None = None

    def attach(self, pin: SimPin) -> None:
        name = self.names[pin.number]
        inner = pin.listener
        clock = time.thread_time_ns

        def changed(p: SimPin) -> None:
            self.last_cpu = clock()
            self.writes[name] = self.writes.get(name, 0) + 1
            if self.on_write is not None:
                self.on_write(name, p.state)
            if inner is not None:
                t = clock()
                inner(p)
                self.physics_ns += clock() - t

        pin.listener = changed


@dataclass
class Bench:
    """The firmware as ``launcher run`` builds it, on the simulated board, instrumented."""

    sim: SimLauncher
    app: Launcher
    pins: PinWatch
    audio: Stamp
    edge: Stamp
    edge_cpu: list[int]  # thread CPU time (ns) of the newest posted button edge

    @property
    def button(self) -> SimPin:
        return self.sim.pin(self.app.board.pins.button)

    @property
    def lid(self) -> SimPin:
        return self.sim.pin(self.app.board.pins.lid_closed)

    def counters(self) -> dict[str, int]:
        c = self.app.machine.memory.counters
        return {k: c.get(k, 0) for k in ("presses", "shots", "cards_shot")}

    def close(self) -> None:
        self.app.stop()
        self.sim.board.close()


def settings_for(state: Path) -> config.Settings:
    """The stock settings, but every press shoots one card, and short guards for a bench."""
    s = config.load()
    every = config.SideLuck(hazard=(1.0,), sizes=(1,), weights=(1.0,))
    # Real time: a short mash guard and debounce so that thousands of presses take seconds.
    return replace(s, luck=replace(s.luck, seed=1, mild=every, wild=every),
                   timing=replace(s.timing, mash_guard=0.004, debounce=0.001),
                   state_path=state)


def build(reactor: Reactor, cards: int, *, slow_store: bool = False, seed: int = 1,
          stamps: bool = True) -> Bench:
    """``build_app`` on the simulated board, with ``cards`` loaded, started."""
    folder = Path(tempfile.mkdtemp(prefix="bench-press-"))
    settings = settings_for(folder / "state.json")
    if settings.audio.backend != "auto":
        raise RuntimeError(f"the stock audio backend is {settings.audio.backend}, not auto")
    sim = SimLauncher(reactor, settings.pins, Physics(eject_interval=0.002, beam_time=0.0005))
    sim.load(range(cards))
    store = None
    if slow_store:
        def slow_write(path: Path, text: str) -> None:
            time.sleep(SLOW_SAVE)
            atomic_write(path, text)

        store = StateStore(settings.state_path, slow_write)
    app = build_app(settings, reactor, random.Random(seed), sim.board, store=store,
                    warn=lambda _: None)
    audio, edge_run = Stamp(), Stamp()
    speaker = app.cues.speaker  # type: ignore[attr-defined]
    play = speaker.play

    def stamped_play(cue: str) -> None:
        audio.note()
        play(cue)

    if stamps:  # the latency run's wall-clock stamps (the CPU run keeps them out of its way)
        speaker.play = stamped_play
    edge_cpu = [0]
    edge = app.inputs.edge

    def stamped_edge(d: Any, level: bool) -> None:
        if d.name == "button" and level:
            if stamps:
                edge_run.note()
            edge_cpu[0] = time.thread_time_ns()
        edge(d, level)

    app.inputs.edge = stamped_edge  # type: ignore[method-assign]
    numbers = {getattr(settings.pins, n): n for n in OUTPUTS
               if getattr(settings.pins, n) is not None}
    watch = PinWatch(numbers)
    for number in numbers:
        watch.attach(sim.pin(number))
    app.start()
    app.load(cards)
    return Bench(sim, app, watch, audio, edge_run, edge_cpu)


def check(b: Bench, presses: int, counters_before: dict[str, int], in1_writes: int) -> dict:
    """That the run measured what it says: every press accepted and shot, an IN1 write each."""
    after = b.counters()
    done = {k: after[k] - counters_before[k] for k in after}
    if done != {"presses": presses, "shots": presses, "cards_shot": presses}:
        raise RuntimeError(f"{presses} presses sent, the firmware counted {done}")
    if in1_writes < presses:
        raise RuntimeError(f"{presses} presses but {in1_writes} writes to IN1 seen")
    return done


def percentiles(xs: list[float]) -> dict[str, float]:
    """n, p50, p99 and max, in microseconds."""
    s = sorted(xs)
    if not s:
        return {"n": 0, "p50_us": 0.0, "p99_us": 0.0, "max_us": 0.0}
    return {"n": len(s), "p50_us": s[len(s) // 2] * 1e6,
            "p99_us": s[min(len(s) - 1, round(0.99 * len(s)) - 1)] * 1e6,
            "max_us": s[-1] * 1e6}


class GcWatch:
    """Pauses of the cyclic collector, per generation, from ``gc.callbacks``."""

    def __init__(self) -> None:
        self.pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.pauses[info["generation"]].append(time.perf_counter() - self._start)

    def summary(self) -> dict[str, Any]:
        return {f"gen{g}": {"count": len(p), "max_us": max(p, default=0.0) * 1e6}
                for g, p in self.pauses.items()}


def gap_maker(gaps: str, seed: int) -> Callable[[], float]:
    """Seconds from one press's edge to the next: drawn from ``HUMAN_GAPS``, or 0 (fast)."""
    rng = random.Random(seed)
    if gaps == "human":
        return lambda: rng.uniform(*HUMAN_GAPS)
    if gaps == "fast":
        return lambda: 0.0
    raise ValueError(f"gaps: fast or human, not {gaps!r}")


def run(presses: int, lids: int, slow_store: bool, gc_mode: str, seed: int = 1,
        gaps: str = "fast") -> dict[str, Any]:
    """Latency on the real reactor thread, as ``launcher run`` runs it."""
    reactor = RealReactor()
    b = build(reactor, presses + lids + 10, slow_store=slow_store, seed=seed)
    in1_on, stop, in1 = Stamp(), Stamp(), [0]

    def on_write(name: str, level: float) -> None:
        if name == "motor_in1" and level > 0:
            in1[0] += 1
            in1_on.note()
        elif name in ("motor_in1", "motor_sleep") and level == 0:
            stop.note()

    b.pins.on_write = on_write
    if gc_mode == "runner":
        from launcher.firmware.runner import tune_gc

        tune_gc()
    watch = GcWatch()
    gc.callbacks.append(watch)
    loop = threading.Thread(target=reactor.run, name="reactor")
    loop.start()
    to_motor: list[float] = []
    to_audio: list[float] = []
    to_stop: list[float] = []
    to_run: list[float] = []
    run_to_motor: list[float] = []
    gap = gap_maker(gaps, seed)
    jitter = random.Random(seed)
    app = b.app

    def settle() -> None:
        deadline = time.perf_counter() + WAIT
        while app.machine.state != machine.READY:
            if time.perf_counter() > deadline:
                raise RuntimeError(f"not ready after 1 s: {app.machine.state}")
            time.sleep(0.0005)

    started = time.perf_counter()
    try:
        time.sleep(0.05)
        before = b.counters()
        for _ in range(presses):
            wait = gap()
            for s in (in1_on, b.audio, b.edge):
                s.arm()
            t0 = time.perf_counter()
            b.button.drive_low()
            to_motor.append(in1_on.since(t0))
            to_audio.append(b.audio.since(t0))
            to_run.append(b.edge.since(t0))
            run_to_motor.append(to_motor[-1] - to_run[-1])
            time.sleep(wait / 3 or FAST_HOLD)  # a hand holds the button a while
            b.button.drive_high()
            settle()
            time.sleep(max(FAST_REST, t0 + wait - time.perf_counter()))
        done = check(b, presses, before, in1[0])
        b.sim.stall_roller(True)  # the motor keeps running until the lid stops it
        for _ in range(lids):
            in1_on.arm()
            b.button.drive_low()
            in1_on.since(time.perf_counter())
            time.sleep(0.001 + 0.002 * jitter.random())
            stop.arm()
            t0 = time.perf_counter()
            b.lid.drive_high()  # the lid leaves closed
            to_stop.append(stop.since(t0))
            b.button.drive_high()
            time.sleep(0.002)
            b.lid.drive_low()
            settle()
            time.sleep(0.004)
    finally:
        elapsed = time.perf_counter() - started
        gc.callbacks.remove(watch)
        reactor.post(b.close)
        reactor.stop()
        loop.join()
    writes = b.app.store.writes
    if writes < 1:
        raise RuntimeError("the state file was never written")
    return {
        "presses": presses, "lids": lids, "gaps": gaps, "slow_store": slow_store,
        "gc": gc_mode, "log": logging.getLevelName(logging.getLogger("launcher")
                                                   .getEffectiveLevel()).lower(),
        "audio": type(b.app.cues.speaker).__name__,  # type: ignore[attr-defined]
        "seconds": elapsed, "state_writes": writes, "counted": done, "in1_writes": in1[0],
        "edge_to_motor": percentiles(to_motor), "edge_to_audio": percentiles(to_audio),
        "lid_to_stop": percentiles(to_stop), "edge_to_reactor": percentiles(to_run),
        "reactor_to_motor": percentiles(run_to_motor), "gc_pauses": watch.summary(),
    }


def cpu(presses: int, gaps: str = "human", seed: int = 1) -> dict[str, Any]:
    """The firmware's CPU per press on one thread, posted edge to its last pin write.

    A manual reactor is moved on by each gap as real time sleeps through it, so the timers
    between presses (the LED, the amplifier's tail, the state save) run as they would.
    """
    from launcher.firmware.runner import tune_gc

    reactor = ManualReactor()
    b = build(reactor, presses + 10, seed=seed, stamps=False)
    reactor.advance(1.0)
    tune_gc()  # as `launcher run` does after start
    gap = gap_maker(gaps, seed)
    costs: list[float] = []
    writes_per_press: list[int] = []
    in1 = 0
    before = b.counters()
    for _ in range(presses):
        wait = gap() or FAST_HOLD + FAST_REST
        time.sleep(wait)
        reactor.advance(wait)
        b.pins.physics_ns = 0
        b.pins.writes.clear()
        b.button.drive_low()
        reactor.advance(0)  # the posted edge and the timers it makes due at once
        if "motor_in1" not in b.pins.writes:
            raise RuntimeError("a press made no IN1 write")
        in1 += b.pins.writes["motor_in1"]
        writes_per_press.append(sum(b.pins.writes.values()))
        costs.append((b.pins.last_cpu - b.edge_cpu[0] - b.pins.physics_ns) / 1e9)
        reactor.advance(0.002)
        b.button.drive_high()
        while b.app.machine.state != machine.READY:
            reactor.advance(0.001)
    done = check(b, presses, before, in1)
    reactor.advance(1.0)  # the last save
    b.close()
    if b.app.store.writes < 1:
        raise RuntimeError("the state file was never written")
    return {"presses": presses, "gaps": gaps, "counted": done,
            "log": logging.getLevelName(logging.getLogger("launcher")
                                        .getEffectiveLevel()).lower(),
            "pin_writes_per_press": statistics.median(writes_per_press),
            "cpu": percentiles(costs)}


def board_memory(presses: int, keep: int = 500, seed: int = 1) -> dict[str, float]:
    """Memory the simulated board and its firmware keep as presses go by (``SimRig``, the
    manual reactor, default luck, cards put back as they run out): Python's allocations
    (tracemalloc) over ``presses`` presses, after a warm-up long enough to fill the
    bounded histories (motor samples, ejected cards, cues: ``keep`` entries each here;
    ``hal.sim.HISTORY`` by default, where a long run's memory goes until they are full)."""
    import tracemalloc

    from launcher.sim.rig import SimRig

    tracemalloc.start()  # before the rig: everything it keeps is traced, and what it drops
    rig = SimRig(seed=seed, keep=keep)

    def press() -> None:
        if len(rig.sim.cartridge) < 20:
            rig.load(list(range(200)))
        rig.press()

    try:
        for _ in range(4 * keep):
            press()
        gc.collect()
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(presses):
            press()
        gc.collect()
        end = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
        rig.close()
    return {"presses": presses, "keep": keep, "bytes_per_press": (end - start) / presses,
            "kib_at_start": start / 1024, "kib_at_end": end / 1024}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cpu", action="store_true",
                   help="the CPU of each press's handling on one thread, not the latency")
    p.add_argument("--presses", type=int)
    p.add_argument("--lids", type=int, default=500)
    p.add_argument("--gaps", choices=("fast", "human"))
    p.add_argument("--slow-store", action="store_true",
                   help=f"the state writer's store takes {SLOW_SAVE * 1e3:.0f} ms a save")
    p.add_argument("--gc", choices=("runner", "default"), default="runner")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--log", choices=("info", "warning"), default="info",
                   help="log level (default info, as `launcher run`: a line per event)")
    a = p.parse_args(argv)
    # As `launcher run` logs: every event at INFO on stderr (the journal, under systemd).
    logging.basicConfig(level=getattr(logging, a.log.upper()), stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    if a.cpu:
        out = cpu(a.presses or 200, a.gaps or "human", a.seed)
    else:
        out = run(a.presses or 5000, a.lids, a.slow_store, a.gc, a.seed, a.gaps or "fast")
    json.dump(out, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
