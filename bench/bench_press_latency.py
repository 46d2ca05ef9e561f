"""Press latency: from a button edge on a mock pin to the audio backend's play call.

The path measured is the firmware's own: ``drive_low()`` on the button's mock pin ->
gpiozero's callback -> ``reactor.post`` -> debounce -> state machine -> ``CuePlayer.play``
(amplifier pin high) -> ``SimpleAudioSpeaker.play`` (its buffers preloaded at start) ->
the backend's ``WaveObject.play``, where the time is taken.

Two runs:
  manual  the ManualReactor the tests use; the reactor step after the edge is timed too.
  thread  a RealReactor on its own thread, as in ``launcher run``: the edge comes from the
          main thread (as gpiozero's callbacks do) and the reactor thread has to wake up.

By default the backend is a stand-in ``simpleaudio`` module whose ``play`` only notes the
time. ``--real-audio`` calls real simpleaudio after noting it (``--alsa-null`` first points
ALSA at a null device, for machines without a sound card) and also reports how long the
real ``play`` call itself takes.

    python bench/bench_press_latency.py [--presses 1000] [--real-audio [--alsa-null]]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import types
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hal.audio import SimpleAudioSpeaker
from hal.sim import Physics, SimLauncher
from launcher.core import config, machine
from launcher.core.reactor import ManualReactor, RealReactor
from launcher.firmware.app import Launcher
from launcher.firmware.sound import CuePlayer, load_pack

TARGET_P99 = 0.002


class Stamps:
    """Where the backend's play call notes the time (and, for real audio, its duration)."""

    def __init__(self) -> None:
        self.at: list[float] = []
        self.call: list[float] = []
        self.played = threading.Event()


def stamping_module(stamps: Stamps, real: types.ModuleType | None) -> types.ModuleType:
    """A ``simpleaudio``-shaped module whose ``WaveObject.play`` notes perf_counter first."""
    module = types.ModuleType("simpleaudio_stamped")

    class Done:
        def stop(self) -> None:
            pass

        def is_playing(self) -> bool:
            return False

        def wait_done(self) -> None:
            pass

    class WaveObject:
        def __init__(self, data: bytes, channels: int, width: int, rate: int) -> None:
            self.real = None if real is None else real.WaveObject(data, channels, width, rate)

        def play(self) -> object:
            t = time.perf_counter()
            stamps.at.append(t)
            try:
                if self.real is None:
                    return Done()
                out = self.real.play()
                stamps.call.append(time.perf_counter() - t)
                return out
            finally:
                stamps.played.set()

    module.WaveObject = WaveObject  # type: ignore[attr-defined]
    return module


def settings_for(run: str) -> config.Settings:
    s = config.load()
    if run == "thread":
        # Real time: a short mash guard and debounce so that 1000 presses take seconds.
        s = replace(s, timing=replace(s.timing, mash_guard=0.004, debounce=0.001))
    return replace(s, luck=replace(s.luck, seed=1))


def build(run: str, stamps: Stamps, real: types.ModuleType | None):
    settings = settings_for(run)
    reactor = ManualReactor() if run == "manual" else RealReactor()
    physics = Physics() if run == "manual" else Physics(eject_interval=0.002, beam_time=0.0005)
    sim = SimLauncher(reactor, settings.pins, physics)
    sim.load(range(100_000))
    pack = load_pack(settings.audio.pack)
    speaker = SimpleAudioSpeaker(module=stamping_module(stamps, real))
    speaker.load(pack.files)
    durations = dict(pack.durations)
    if run == "thread":
        # Every cue ends before the next press, so no press cue meets a sounding BAM
        # (it would be dropped, by design, and have no play call to time).
        durations = dict.fromkeys(durations, 0.001)
    player = CuePlayer(speaker, sim.board.amp, reactor, durations)
    app = Launcher(sim.board, reactor, settings, random.Random(1), player)
    return settings, reactor, sim, app, durations


def run_manual(presses: int, stamps: Stamps, real: types.ModuleType | None) -> list[float]:
    settings, reactor, sim, app, durations = build("manual", stamps, real)
    app.start()
    app.load(100_000)
    reactor.advance(max(durations.values()) + 1)
    button = sim.pin(settings.pins.button)
    gap = max(durations.values()) + settings.timing.mash_guard + 0.2
    out = []
    for _ in range(presses):
        n = len(stamps.at)
        t0 = time.perf_counter()
        button.drive_low()
        reactor.advance(0)
        if len(stamps.at) != n + 1:
            raise RuntimeError("a press played no cue")
        out.append(stamps.at[-1] - t0)
        reactor.advance(0.08)
        button.drive_high()
        while app.machine.state == machine.SHOOTING:
            reactor.advance(0.02)
        reactor.advance(gap)
    app.stop()
    sim.board.close()
    return out


def run_thread(presses: int, stamps: Stamps, real: types.ModuleType | None) -> list[float]:
    settings, reactor, sim, app, _ = build("thread", stamps, real)
    button = sim.pin(settings.pins.button)
    reactor.post(app.start)
    reactor.post(lambda: app.load(100_000))
    worker = threading.Thread(target=reactor.run, name="reactor")
    worker.start()
    out = []
    try:
        time.sleep(0.05)
        for _ in range(presses):
            stamps.played.clear()
            n = len(stamps.at)
            t0 = time.perf_counter()
            button.drive_low()
            if not stamps.played.wait(1.0) or len(stamps.at) != n + 1:
                raise RuntimeError("a press played no cue within 1 s")
            out.append(stamps.at[-1] - t0)
            time.sleep(0.002)
            button.drive_high()
            # Wait (off the measured path) until the shot, if any, is over.
            while app.machine.state != machine.READY:
                time.sleep(0.001)
            time.sleep(0.01)
    finally:
        reactor.post(app.stop)
        reactor.stop()
        worker.join()
        sim.board.close()
    return out


def report(name: str, samples: list[float]) -> bool:
    xs = sorted(samples)
    p50 = xs[len(xs) // 2]
    p99 = xs[min(len(xs) - 1, round(0.99 * len(xs)) - 1)]
    ok = p99 < TARGET_P99
    print(f"{name:<8} n={len(xs):5d}  p50={p50 * 1e6:7.1f} us  p99={p99 * 1e6:7.1f} us  "
          f"max={xs[-1] * 1e6:8.1f} us  mean={statistics.fmean(xs) * 1e6:7.1f} us  "
          f"p99 < {TARGET_P99 * 1e3:.0f} ms: {'yes' if ok else 'NO'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=1000)
    parser.add_argument("--real-audio", action="store_true",
                        help="also call real simpleaudio (needs the audio extra)")
    parser.add_argument("--alsa-null", action="store_true",
                        help="with --real-audio: play into an ALSA null device")
    parser.add_argument("--only", choices=("manual", "thread"))
    args = parser.parse_args()
    real = None
    if args.real_audio:
        if args.alsa_null:
            conf = Path(tempfile.mkdtemp()) / "asound.conf"
            conf.write_text("pcm.!default { type null }\n")
            os.environ["ALSA_CONFIG_PATH"] = str(conf)  # read when ALSA first opens a device
        import simpleaudio

        real = simpleaudio
    print(f"press -> backend play call, {args.presses} presses per run, buffers preloaded, "
          f"backend: {'real simpleaudio' if real else 'stand-in (notes the time only)'}")
    ok = True
    runs = {"manual": run_manual, "thread": run_thread}
    for name, run in runs.items():
        if args.only and name != args.only:
            continue
        stamps = Stamps()
        ok &= report(name, run(args.presses, stamps, real))
        if stamps.call:
            xs = sorted(stamps.call)
            print(f"{'':<8} real simpleaudio play() itself: p50={xs[len(xs) // 2] * 1e6:.0f} us"
                  f"  p99={xs[round(0.99 * len(xs)) - 1] * 1e6:.0f} us")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
