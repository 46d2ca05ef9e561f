"""A profile of each hot path (cProfile): where a press, a game and a console line spend time.

- the press path: the posted button edge to the end of the firmware's handling, on the
  manual reactor (the firmware as bench/press.py builds it, one thread, so the profiler
  sees it all), with 0.1 s of idle before each press;
- the game loop of each engine (Flip Attack direct, classic UNO, UNO Flip, Gin Rummy);
- the console's line handler (``Console.handle_line``) on ``status``, ``help`` and ``luck show``.

    python -m bench.profile [--top 6]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
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


def press_path(presses: int, gap: float = 0.1) -> cProfile.Profile:
    """The press as ``bench.press --cpu`` runs it (``build_app`` on the simulated board, a
    manual reactor), ``gap`` seconds of real idle before each, the posted edge profiled."""
    import time

    from bench.press import build
    from launcher.core import machine
    from launcher.core.reactor import ManualReactor

    reactor = ManualReactor()
    b = build(reactor, presses + 10, stamps=False)
    reactor.advance(1)
    prof = cProfile.Profile()
    for _ in range(presses):
        time.sleep(gap)
        reactor.advance(gap)
        b.button.drive_low()
        prof.enable()
        reactor.advance(0)
        prof.disable()
        reactor.advance(0.002)
        b.button.drive_high()
        while b.app.machine.state != machine.READY:
            reactor.advance(0.001)
    b.close()
    return prof


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
        "press path (posted edge to the end of its handling)": _top(press_path(n * 10), top),
        "UNO Flip Attack game loop (direct)": _top(game_loop(flip_attack(False), n * 3), top),
        "classic UNO game loop": _top(game_loop(table_game("uno"), n * 10), top),
        "UNO Flip game loop": _top(game_loop(table_game("uno-flip"), n * 10), top),
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
