"""A profile of each hot path (cProfile): where a press, a game and a console line spend time.

- the press path: button edge to the end of the firmware's handling, on the manual reactor
  (the same parts as bench/press.py, one thread, so the profiler sees it all);
- the game loop of each engine (Flip Attack direct, classic UNO, UNO Flip, Gin Rummy);
- the console's line handler (``Console.handle_line``) on ``status``, ``help`` and ``luck show``.

    python -m bench.profile [--top 6]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _top(prof: cProfile.Profile, n: int) -> dict[str, Any]:
    stats = pstats.Stats(prof)
    total = stats.total_tt  # type: ignore[attr-defined]
    rows = []
    for (file, line, func), (_, calls, tt, ct, _) in stats.stats.items():  # type: ignore[attr-defined]
        where = Path(file).name if file != "~" else ""
        rows.append((tt, ct, calls, f"{where}:{line} {func}" if where else func))
    rows.sort(reverse=True)
    return {"total_s": total, "rows": [{"function": f, "self_share": tt / total,
                                        "cumulative_share": ct / total, "calls": c}
                                       for tt, ct, c, f in rows[:n]]}


def press_path(presses: int) -> cProfile.Profile:
    from bench.press import Stamp, settings_for, stamping_simpleaudio
    from hal.audio import SimpleAudioSpeaker
    from hal.sim import Physics, SimLauncher
    from launcher.core import machine
    from launcher.core.reactor import ManualReactor
    from launcher.firmware.actuators import Actuators
    from launcher.firmware.app import Launcher
    from launcher.firmware.sound import CuePlayer, load_pack
    from launcher.firmware.state import StateStore

    folder = Path(tempfile.mkdtemp(prefix="bench-profile-"))
    settings = settings_for(folder / "state.json")
    reactor = ManualReactor()
    sim = SimLauncher(reactor, settings.pins, Physics(eject_interval=0.002, beam_time=0.0005))
    sim.load(range(presses + 10))
    pack = load_pack(settings.audio.pack)
    speaker = SimpleAudioSpeaker(module=stamping_simpleaudio(Stamp()))
    speaker.load(pack.files)
    actuators = Actuators(sim.board, settings.motor, reactor)
    player = CuePlayer(speaker, actuators.amp, reactor, dict.fromkeys(pack.durations, 0.001))
    app = Launcher(sim.board, reactor, settings, random.Random(1), player,
                   StateStore(settings.state_path), actuators)
    app.start()
    app.load(presses + 10)
    reactor.advance(1)
    button = sim.pin(settings.pins.button)
    prof = cProfile.Profile()
    for _ in range(presses):
        prof.enable()
        button.drive_low()
        reactor.advance(0)
        prof.disable()
        reactor.advance(0.002)
        button.drive_high()
        while app.machine.state != machine.READY:
            reactor.advance(0.001)
        reactor.advance(0.005)
    app.stop()
    sim.board.close()
    return prof


def handling(presses: int, gap: float) -> dict[str, float]:
    """The firmware's handling of a press on one thread (manual reactor, no hand-over):
    from the reactor running the edge to the motor command and to the audio call, µs, with
    ``gap`` seconds of real idle time before each press (0: back to back, caches warm)."""
    import time

    from bench.press import Stamp, percentiles, settings_for, stamping_simpleaudio
    from hal.audio import SimpleAudioSpeaker
    from hal.sim import Physics, SimLauncher
    from launcher.core import machine
    from launcher.core.reactor import ManualReactor
    from launcher.firmware.actuators import Actuators
    from launcher.firmware.app import Launcher
    from launcher.firmware.sound import CuePlayer, load_pack
    from launcher.firmware.state import StateStore

    folder = Path(tempfile.mkdtemp(prefix="bench-handling-"))
    settings = settings_for(folder / "state.json")
    reactor = ManualReactor()
    sim = SimLauncher(reactor, settings.pins, Physics(eject_interval=0.002, beam_time=0.0005))
    sim.load(range(presses + 10))
    pack = load_pack(settings.audio.pack)
    audio, motor, edge_run = Stamp(), Stamp(), Stamp()
    speaker = SimpleAudioSpeaker(module=stamping_simpleaudio(audio))
    speaker.load(pack.files)
    actuators = Actuators(sim.board, settings.motor, reactor)
    player = CuePlayer(speaker, actuators.amp, reactor, dict.fromkeys(pack.durations, 0.001))
    app = Launcher(sim.board, reactor, settings, random.Random(1), player,
                   StateStore(settings.state_path), actuators)
    forward, edge = sim.board.motor.forward, app._edge

    def stamped_forward(speed: float) -> None:
        motor.note()
        forward(speed)

    def stamped_edge(d: Any, level: bool) -> None:
        if d.name == "button" and level:
            edge_run.note()
        edge(d, level)

    sim.board.motor.forward = stamped_forward  # type: ignore[method-assign]
    app._edge = stamped_edge  # type: ignore[method-assign]
    app.start()
    app.load(presses + 10)
    reactor.advance(1)
    button = sim.pin(settings.pins.button)
    to_motor, to_audio = [], []
    for _ in range(presses):
        if gap:
            time.sleep(gap)
        for stamp in (audio, motor, edge_run):
            stamp.arm()
        button.drive_low()
        reactor.advance(0)
        to_motor.append(motor.at - edge_run.at)
        to_audio.append(audio.at - edge_run.at)
        reactor.advance(0.002)
        button.drive_high()
        while app.machine.state != machine.READY:
            reactor.advance(0.001)
        reactor.advance(0.005)
    app.stop()
    sim.board.close()
    return {"gap_s": gap, "to_motor": percentiles(to_motor), "to_audio": percentiles(to_audio)}


def game_loop(play: Callable[[], int], games: int) -> cProfile.Profile:
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(games):
        play()
    prof.disable()
    return prof


def console_lines(rounds: int) -> cProfile.Profile:
    from launcher.firmware.console import Console
    from launcher.sim.rig import SimRig

    rig = SimRig()
    console = Console(rig.app, sim=rig.sim)
    lines = [b"status", b"help", b"luck show", b"inventory", b"nonsense here"]
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(rounds):
        for line in lines:
            console.handle_line(line)
    prof.disable()
    rig.close()
    return prof


def profiles(scale: float = 1.0, top: int = 6) -> dict[str, dict[str, Any]]:
    from bench.games import flip_attack, gin_game, table_game

    n = max(1, int(scale * 10))
    return {
        "press path (edge to the end of its handling)": _top(press_path(n * 200), top),
        "UNO Flip Attack game loop (direct)": _top(game_loop(flip_attack(False), n * 3), top),
        "classic UNO game loop": _top(game_loop(
            table_game("launcher.games.uno.rules", "CLASSIC_UNO"), n * 10), top),
        "UNO Flip game loop": _top(game_loop(
            table_game("launcher.games.uno.flip", "UNO_FLIP_GAME"), n * 10), top),
        "Gin Rummy game loop": _top(game_loop(gin_game(), n * 3), top),
        "console line handler": _top(console_lines(n * 100), top),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--top", type=int, default=6)
    a = p.parse_args(argv)
    for name, prof in profiles(top=a.top).items():
        print(f"{name} ({prof['total_s']:.2f} s profiled)")
        for r in prof["rows"]:
            print(f"  {r['self_share']:6.1%} self {r['cumulative_share']:6.1%} cum "
                  f"{r['calls']:>8} calls  {r['function']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
