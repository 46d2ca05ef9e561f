"""Press latency through the real firmware path: button edge -> motor command and audio call.

The firmware is built as ``launcher run`` builds it (``Actuators``, ``CuePlayer``,
``StateStore`` with its writer thread and a real state file, ``Launcher``), on the
simulated board, with a ``RealReactor`` on its own thread. The main thread plays the
pin library's thread: it drives the button's mock pin low (gpiozero calls the firmware's
edge callback on the driving thread, which posts to the reactor) and times:

- edge -> motor command: the firmware's call of ``HBridgeMotor.forward``, stamped before
  the simulator's physics runs (that physics is the simulator's, not the firmware's);
- edge -> audio call: the speaker backend's ``play`` (a stand-in ``simpleaudio`` module
  whose ``WaveObject.play`` notes the time; buffers preloaded as at start);
- lid leaving closed -> motor stop, with the roller stalled so the motor is running;
- and, to tell the two apart, edge -> the reactor thread running the edge (the thread
  hand-over: the OS waking the thread, the GIL) and from there -> motor command (the
  firmware's own handling).

Every press shoots one card (both sides' hazard curves are ``[1.0]``), so each press has a
motor command and a BAM cue. ``--slow-store`` gives the state writer a store that takes
200 ms a save (an SD card at its worst). ``--gc`` chooses the collector's set-up: ``runner``
is what ``launcher run`` does after start (``launcher.firmware.runner.tune_gc``),
``default`` is Python's own.

    python -m bench.press [--presses 5000] [--lids 500] [--slow-store] [--gc runner|default]

It prints one JSON object (the suite runs it in a fresh process per run).
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import random
import sys
import tempfile
import threading
import time
import types
from dataclasses import replace
from pathlib import Path
from typing import Any

from hal.audio import SimpleAudioSpeaker
from hal.sim import Physics, SimLauncher
from launcher.core import config, machine
from launcher.core.reactor import RealReactor
from launcher.firmware.actuators import Actuators
from launcher.firmware.app import Launcher
from launcher.firmware.disk import atomic_write
from launcher.firmware.sound import CuePlayer, load_pack
from launcher.firmware.state import StateStore

SLOW_SAVE = 0.2  # s a save takes with --slow-store
WAIT = 1.0  # s: a press whose command has not come by then is a failure


class Stamp:
    """The time of the first call after ``arm``; ``hit`` is set then."""

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


def stamping_simpleaudio(stamp: Stamp) -> types.ModuleType:
    """A ``simpleaudio``-shaped module whose ``WaveObject.play`` notes the time."""
    module = types.ModuleType("simpleaudio_stamped")

    class Playing:
        def stop(self) -> None:
            pass

        def is_playing(self) -> bool:
            return False

        def wait_done(self) -> None:
            pass

    class WaveObject:
        def __init__(self, data: bytes, channels: int, width: int, rate: int) -> None:
            pass

        def play(self) -> Playing:
            stamp.note()
            return Playing()

    module.WaveObject = WaveObject  # type: ignore[attr-defined]
    return module


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


def settings_for(state: Path) -> config.Settings:
    s = config.load()
    every = config.SideLuck(hazard=(1.0,), sizes=(1,), weights=(1.0,))
    # Real time: a short mash guard and debounce so that thousands of presses take seconds.
    return replace(s, luck=replace(s.luck, seed=1, mild=every, wild=every),
                   timing=replace(s.timing, mash_guard=0.004, debounce=0.001),
                   state_path=state)


def percentiles(xs: list[float]) -> dict[str, float]:
    """n, p50, p99 and max, in microseconds."""
    s = sorted(xs)
    if not s:
        return {"n": 0, "p50_us": 0.0, "p99_us": 0.0, "max_us": 0.0}
    return {"n": len(s), "p50_us": s[len(s) // 2] * 1e6,
            "p99_us": s[min(len(s) - 1, round(0.99 * len(s)) - 1)] * 1e6,
            "max_us": s[-1] * 1e6}


def run(presses: int, lids: int, slow_store: bool, gc_mode: str, seed: int = 1) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="bench-press-"))
    settings = settings_for(folder / "state.json")
    reactor = RealReactor()
    sim = SimLauncher(reactor, settings.pins, Physics(eject_interval=0.002, beam_time=0.0005))
    sim.load(range(presses + lids + 10))
    motor_on, motor_off, audio = Stamp(), Stamp(), Stamp()
    motor = sim.board.motor
    forward, stop = motor.forward, motor.stop

    def stamped_forward(speed: float) -> None:
        # Timed when the pin writes are done: the driver's wake (nSLEEP high: it sleeps
        # between presses) was written just before, IN2 and IN1's duty here.
        forward(speed)
        motor_on.note()

    def stamped_stop(brake: bool = True) -> None:
        motor_off.note()
        stop(brake)

    motor.forward = stamped_forward  # type: ignore[method-assign]
    motor.stop = stamped_stop  # type: ignore[method-assign]
    pack = load_pack(settings.audio.pack)
    speaker = SimpleAudioSpeaker(module=stamping_simpleaudio(audio))
    speaker.load(pack.files)
    # Every cue ends before the next press, so no press cue meets a sounding BAM (it would
    # be dropped, by design, and have no play call to time).
    durations = dict.fromkeys(pack.durations, 0.001)
    actuators = Actuators(sim.board, settings.motor, reactor)
    player = CuePlayer(speaker, actuators.amp, reactor, durations)

    def slow_write(path: Path, text: str) -> None:
        time.sleep(SLOW_SAVE)
        atomic_write(path, text)

    store = StateStore(settings.state_path, slow_write if slow_store else atomic_write)
    app = Launcher(sim.board, reactor, settings, random.Random(seed), player, store, actuators)
    edge_run = Stamp()
    edge = app._edge

    def stamped_edge(d: Any, level: bool) -> None:
        if d.name == "button" and level:
            edge_run.note()
        edge(d, level)

    app._edge = stamped_edge  # type: ignore[method-assign]
    # As run_firmware does: start on this thread, then hand the loop to the reactor.
    app.start()
    app.load(presses + lids + 10)
    if gc_mode == "runner":
        from launcher.firmware.runner import tune_gc

        tune_gc()
    watch = GcWatch()
    gc.callbacks.append(watch)
    loop = threading.Thread(target=reactor.run, name="reactor")
    loop.start()
    button = sim.pin(settings.pins.button)
    lid = sim.pin(settings.pins.lid_closed)
    to_motor: list[float] = []
    to_audio: list[float] = []
    to_stop: list[float] = []
    to_run: list[float] = []
    run_to_motor: list[float] = []
    jitter = random.Random(seed)

    def settle() -> None:
        deadline = time.perf_counter() + WAIT
        while app.machine.state != machine.READY:
            if time.perf_counter() > deadline:
                raise RuntimeError(f"not ready after 1 s: {app.machine.state}")
            time.sleep(0.0005)

    started = time.perf_counter()
    try:
        time.sleep(0.05)
        for _ in range(presses):
            motor_on.arm()
            audio.arm()
            edge_run.arm()
            t0 = time.perf_counter()
            button.drive_low()
            to_motor.append(motor_on.since(t0))
            to_audio.append(audio.since(t0))
            to_run.append(edge_run.since(t0))
            run_to_motor.append(to_motor[-1] - to_run[-1])
            time.sleep(0.002)
            button.drive_high()
            settle()
            time.sleep(0.004)
        sim.stall_roller(True)  # the motor keeps running until the lid stops it
        for _ in range(lids):
            motor_on.arm()
            button.drive_low()
            motor_on.since(time.perf_counter())
            time.sleep(0.001 + 0.002 * jitter.random())
            motor_off.arm()
            t0 = time.perf_counter()
            lid.drive_high()  # the lid leaves closed
            to_stop.append(motor_off.since(t0))
            button.drive_high()
            time.sleep(0.002)
            lid.drive_low()
            settle()
            time.sleep(0.004)
    finally:
        elapsed = time.perf_counter() - started
        gc.callbacks.remove(watch)
        reactor.post(app.stop)
        reactor.stop()
        loop.join()
        sim.board.close()
    return {
        "presses": presses, "lids": lids, "slow_store": slow_store, "gc": gc_mode,
        "seconds": elapsed, "state_writes": store.writes,
        "edge_to_motor": percentiles(to_motor), "edge_to_audio": percentiles(to_audio),
        "lid_to_stop": percentiles(to_stop), "edge_to_reactor": percentiles(to_run),
        "reactor_to_motor": percentiles(run_to_motor), "gc_pauses": watch.summary(),
        "state_file": str(settings.state_path),
    }


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
    p.add_argument("--presses", type=int, default=5000)
    p.add_argument("--lids", type=int, default=500)
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
    json.dump(run(a.presses, a.lids, a.slow_store, a.gc, a.seed), sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
