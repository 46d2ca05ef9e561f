"""Exceptions injected into each kind of callback the firmware runs, and the recovery after.

Run from the repository root: ``.venv/bin/python tests/reliability/fault_injection.py [N]
[--out FILE]`` (default 900 tries; ``--out docs/results/fault_injection.json`` records the
counts, the time and the command for docs/RELIABILITY.md's row);
``tests/reliability/test_fault_injection.py`` runs a few in the default tier. Each try,
seeded: a simulated unit dealing three cards a press; one callback kind (every reactor timer
the firmware registers, a posted pin edge, a machine dispatch) is made to raise once, at its
next call; a scenario of presses, a flip, waits and a sleep runs until it has. Then, for
every try whose bug fired:

- at the fault's own event, the roller's pins and nSLEEP are low and the rotator is off;
- the fault is ``internal``;
- the way out (``clear``, or a lid cycle, alternately; then a full opening if a turn was
  left waiting) leads to a press that shoots its three cards.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from typing import Any

sys.path.insert(0, ".")
from launcher.core import machine as m
from launcher.core.profiles import parse_profile
from launcher.sim.rig import SimRig


class Injected(RuntimeError):
    """The bug a try plants."""


def kinds(rig: SimRig) -> list[str]:
    """Every kind of callback to break: the firmware's timers by name, a posted edge, a
    dispatch."""
    names = {t.name for t in rig.reactor._timers._live if not t.name.startswith("sim.")}
    return [*sorted(names), "posted edge", "dispatch"]


def plant(rig: SimRig, kind: str) -> list[bool]:
    """Make the next call of ``kind`` raise; the list turns [True] when it has."""
    fired = [False]

    def once(call: Any) -> Any:
        def broken(*args: Any, **kwargs: Any) -> Any:
            if not fired[0]:
                fired[0] = True
                raise Injected(f"injected into {kind}")
            return call(*args, **kwargs)
        return broken

    app = rig.app
    if kind == "posted edge":
        app.inputs.edge = once(app.inputs.edge)  # type: ignore[method-assign]
    elif kind == "dispatch":
        app.machine.handle = once(app.machine.handle)  # type: ignore[method-assign]
    else:
        for t in list(rig.reactor._timers._live):
            if t.name == kind:
                t.callback = once(t.callback)
    return fired


def warm_up(rig: SimRig) -> None:
    """A shot and a flip first, so that every timer the firmware makes on first use exists
    (the machine's, the debounce re-checks) and can be broken too."""
    rig.sim.press()
    rig.settle()
    rig.advance(0.3)
    rig.sim.open_lid()
    rig.settle()
    rig.sim.close_lid()
    rig.advance(0.5)


def scenario(rig: SimRig, rng: random.Random, fired: list[bool]) -> None:
    """Presses, a flip, waits and a sleep, in a random order, until the bug has fired."""
    steps = [
        lambda: (rig.sim.press(), rig.advance(rng.uniform(0.0, 0.6))),
        lambda: (rig.sim.open_lid(), rig.advance(rng.uniform(0.0, 1.5))),
        lambda: (rig.sim.close_lid(), rig.advance(rng.uniform(0.0, 0.5))),
        lambda: rig.advance(rng.uniform(0.0, 3.0)),
        lambda: rig.advance(301.0),  # the idle timer, and sleep
    ]
    for _ in range(60):
        if fired[0]:
            return
        rng.choice(steps)()


def recover(rig: SimRig, way: str) -> None:
    sim = rig.sim
    sim.close_lid()
    rig.advance(0.1)
    if rig.state == m.FAULT:
        if way == "clear":
            rig.app.clear_fault()
        else:
            sim.open_lid(full=False)
            rig.advance(0.1)
            sim.close_lid()
        rig.advance(0.3)
    if rig.state == m.ASLEEP:
        rig.app.wake()
        rig.advance(0.3)
    if rig.app.machine.turn_owed:  # a fault mid-turn left it between detents
        sim.open_lid()
        rig.settle()
        rig.advance(0.1)
        sim.close_lid()
        rig.advance(0.3)


def one_try(seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    rig = SimRig(seed=seed)
    try:
        rig.sim.load(range(60))
        rig.app.load(60)
        rig.app.use_profile(parse_profile("deal 3"))
        warm_up(rig)
        kind = rng.choice(kinds(rig))
        fired = plant(rig, kind)
        seen: dict[str, Any] = {}

        def at_fault(event: str, data: dict[str, Any]) -> None:
            if event == "state" and data["to"] == m.FAULT and "mid" not in seen:
                seen["mid"] = str(data["from"])
            if event == "fault" and "state" not in seen:
                sim = rig.sim
                seen.update(code=data["code"], state=rig.app.machine.state,
                            pins=(sim.level("motor_in1"), sim.level("motor_in2"),
                                  sim.level("motor_sleep"), sim.level("rotator")))

        rig.app.listeners.append(at_fault)
        scenario(rig, rng, fired)
        result = {"seed": seed, "kind": kind, "fired": fired[0]}
        if not fired[0]:
            return result
        rig.advance(0.0)
        result.update(code=seen.get("code"), safe=seen.get("pins") == (0, 0, 0, 0),
                      mid=seen.get("mid"))
        recover(rig, "clear" if seed % 2 else "lid cycle")
        rig.advance(rig.settings.timing.mash_guard)  # a press closer to the last is ignored
        left, out = rig.app.machine.memory.inventory, rig.sim.ejected_total
        rig.sim.press()
        rig.advance(0.05)
        result["shot_started"] = rig.state == m.SHOOTING
        rig.settle()
        result["shoots_again"] = (rig.sim.ejected_total - out == 3
                                  and rig.app.machine.memory.inventory == left - 3)
        return result
    finally:
        rig.close()


def main(argv: list[str]) -> int:
    import argparse
    import logging
    import time

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tries", nargs="?", type=int, default=900)
    p.add_argument("--out", help="write the counts, times and command to this JSON file")
    args = p.parse_args(argv[1:])
    logging.disable(logging.CRITICAL)  # each injected bug logs its traceback, by design
    wall, cpu = time.monotonic(), time.process_time()
    try:
        results = [one_try(seed) for seed in range(args.tries)]
    finally:
        logging.disable(logging.NOTSET)  # a test calling main() logs again after it
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    fired = [r for r in results if r["fired"]]
    bad = [r for r in fired if not (r["code"] == "internal" and r["safe"]
                                    and r["shoots_again"])]
    kinds_seen = Counter(r["kind"] for r in results)
    mid_shot = sum(r.get("mid") == "shooting" for r in fired)
    mid_turn = sum(r.get("mid") == "rotating" for r in fired)
    print(f"{args.tries} tries over {len(kinds_seen)} kinds of callback; {len(fired)} fired; "
          f"{len(fired) - len(bad)} gave an internal fault with the board safe at its event "
          f"and a unit that shot its next three cards after the way out; {len(bad)} did not")
    print("kinds:", ", ".join(f"{k} {n}" for k, n in sorted(kinds_seen.items())))
    print("fired mid-shot:", mid_shot, "mid-turn:", mid_turn)
    for r in bad[:10]:
        print("  not so:", r)
    if args.out:
        record(args.out, {"tries": args.tries, "kinds": dict(sorted(kinds_seen.items())),
                          "fired": len(fired), "mid_shot": mid_shot, "mid_turn": mid_turn,
                          "good": len(fired) - len(bad), "bad": len(bad),
                          "wall_s": round(wall, 1), "cpu_s": round(cpu, 1)}, argv)
    return 1 if bad else 0


def record(path: str, figures: dict[str, Any], argv: list[str]) -> None:
    """Write a run's figures, with its date, command and machine, as JSON (the docs render
    their rows from it: ``python docs/blocks.py --print ...``)."""
    import datetime
    import json
    import os
    import shlex
    from pathlib import Path

    command = shlex.join([".venv/bin/python", *argv])
    meta = {"command": command, "date": datetime.datetime.now(datetime.UTC).strftime(
        "%Y-%m-%d %H:%M UTC"), "cores": os.cpu_count(),
        "load_1min": round(os.getloadavg()[0], 2)}
    Path(path).write_text(json.dumps({**meta, **figures}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
