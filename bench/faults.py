"""The layer campaign: one fault in the firmware at a time, against the real firmware on the
simulated launcher, and what each safety layer then did.

``python -m bench.faults [--tier fast|full] [--out docs/results/layer_faults.json]``;
``--campaign circuit`` runs the circuit campaign instead (bench/circuit.py).

The faults: a pin write or a pin read that raises (every pin the firmware writes or reads,
on every thread that touches it: the reactor, the pin library's callback thread, the guard
thread), at every moment of a scenario that goes through a shot's start, the run and its
renewals, the lid opened mid-shot, a flip with its brake at home, a debug run and the
self-test's motor pulse; and each thread's death (the reactor hung, the guard thread ended,
the pin library's callback thread ended). The scenario is run once to record every call the
firmware makes to its pins, by pin, operation, thread and moment; then once for each
fault, which raises at one of those calls (``fast``: the first call of each pin, operation,
thread and moment, on one wiring; ``full``: every call, on three wirings).

Each run is judged from the simulated board's pins, the firmware's own outputs (the
copper under them, the power contacts in the leads, is the circuit campaign's), not from
what the firmware says:

- the roller is never driven (nSLEEP high, IN1's duty up, IN2 low) with the lid not closed
  for longer than one lease (``motor.lease_ms``) after the lid opens;
- the rotator never turns with the lid not fully open for longer than one lease either (a
  turn stopped by the lid's edge stops at once; one whose edge was lost, at the next
  renewal);
- an injected exception ends in an ``internal`` fault (the self-test: in the walk-through
  stopping, the actuators safe), and ``clear`` then leads to a press that shoots;
- a dead thread ends in an ``internal`` fault that names it, with the systemd watchdog no
  longer fed (a hung reactor feeds nothing by itself), and nothing driven after.

Times are the manual reactor's: the guard thread runs as a timer of the simulator that the
reactor's own hang does not stop, woken when a drive begins, as the real one is.
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.keep import RESULTS as KEPT
from bench.keep import keep
from bench.layer_unit import DEATHS, MOMENTS, WIRINGS, Site, held, run, selftest_pulse
from launcher.core import config

RESULTS = KEPT / "layer_faults.json"
COMMAND = "python -m bench.faults --tier full --out docs/results/layer_faults.json"


# --- the campaign ---------------------------------------------------------------------------


def sites(calls: list[tuple[str, str, str, str]], tier: str) -> list[Site]:
    """The calls to break: ``fast``, per (pin, op, thread, moment) the first of the calls
    the clean run made; ``full``, every one of them."""
    seen: dict[tuple[str, str, str], int] = Counter()
    by: dict[tuple[str, str, str, str], list[int]] = {}
    for pin, op, thread, moment in calls:
        if moment == "teardown":
            continue
        n = seen[(pin, op, thread)]
        seen[(pin, op, thread)] = n + 1
        by.setdefault((pin, op, thread, moment), []).append(n)
    out = []
    for (pin, op, thread, moment), ns in by.items():
        picks = ns[:1] if tier == "fast" else ns
        out += [Site(pin, op, thread, moment, n) for n in picks]
    return out


@dataclass
class Tally:
    """What a campaign found."""

    injected: int = 0
    fired: int = 0
    held: int = 0
    roller_worst: float = 0.0
    turn_worst: float = 0.0
    hang_worst: float = 0.0  # a hung reactor to the roller stopped by its lease
    failures: list[str] = field(default_factory=list)
    by_thread: Counter[str] = field(default_factory=Counter)
    pins: set[str] = field(default_factory=set)
    moments: set[str] = field(default_factory=set)

    def add(self, what: str, r: dict[str, Any], ok: bool, thread: str) -> None:
        self.injected += 1
        self.fired += bool(r["fired"])
        self.held += ok
        self.by_thread[thread] += 1
        self.roller_worst = max(self.roller_worst, r["roller"])
        self.turn_worst = max(self.turn_worst, r["turn"])
        if "hang" in what:
            self.hang_worst = max(self.hang_worst, r.get("death_to_stop", 0.0))
        if not ok:
            self.failures.append(f"{what}: roller {r['roller'] * 1e3:.1f} ms, turn "
                                 f"{r['turn'] * 1e3:.1f} ms, left driven by a layer on its "
                                 f"own {r.get('alone')}, threads ended by it "
                                 f"{r.get('killed')}, internal {r['internal']}, "
                                 f"recovered {r.get('recovered')}, {r.get('detail', '')}")


def campaign(tier: str = "fast", wirings: list[str] | None = None,
             progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    wirings = wirings or (list(WIRINGS) if tier == "full" else [next(iter(WIRINGS))])
    tally = Tally()
    started, cpu0 = time.monotonic(), time.process_time()
    for wiring in wirings:
        clean = run(wiring)
        if clean["roller"] or clean["turn"] or clean["internal"]:
            raise RuntimeError(f"the scenario without a fault failed ({wiring}): roller "
                               f"{clean['roller']}, turn {clean['turn']}: {clean['detail']}")
        todo = sites(clean["calls"], tier)
        progress(f"{wiring}: {len(todo)} pin faults, {len(DEATHS) * len(MOMENTS)} deaths")
        for i, site in enumerate(todo):
            r = run(wiring, site)
            ok = held(r)
            tally.add(f"{wiring}: {site}", r, ok, site.thread)
            tally.pins.add(site.pin)
            tally.moments.add(site.moment)
            if (i + 1) % 50 == 0:
                progress(f"  {i + 1} of {len(todo)}: {tally.held} held so far")
        for death in DEATHS:
            for moment in MOMENTS:
                r = run(wiring, death=(death, moment))
                tally.add(f"{wiring}: {death}, {moment}", r, held(r, death), "death")
    # The self-test's pulse, on its own actuators.
    clean = selftest_pulse(None, None)
    for site in sites(clean["calls"], tier):
        r = selftest_pulse(site, None)
        r["lease"] = config.load().motor.lease
        ok = (r["roller"] <= r["lease"] + 1e-9 and r["turn"] <= r["lease"] + 1e-9
              and r["safe"] and (not r["fired"] or r["told"]))
        r["internal"] = r["told"]
        tally.add(f"self-test pulse: {site}", r, ok, site.thread)
        tally.pins.add(site.pin)
    r = selftest_pulse(None, "the guard thread ends")
    r["lease"], r["internal"] = config.load().motor.lease, True
    tally.add("self-test pulse: the guard thread ends", r,
              r["roller"] <= r["lease"] + 1e-9 and r["safe"], "death")
    tally.moments.add("the self-test pulse")
    return {
        "command": COMMAND if tier == "full" else "python -m bench.faults --tier fast",
        "tier": tier, "wirings": wirings, "lease_ms": config.load().motor.lease * 1e3,
        "injected": tally.injected, "fired": tally.fired, "held": tally.held,
        "by_thread": dict(sorted(tally.by_thread.items())), "pins": sorted(tally.pins),
        "moments": [mo for mo in (*MOMENTS, "the self-test pulse") if mo in tally.moments],
        "deaths": list(DEATHS),
        "roller_worst_ms": round(tally.roller_worst * 1e3, 3),
        "turn_worst_ms": round(tally.turn_worst * 1e3, 3),
        "hang_worst_ms": round(tally.hang_worst * 1e3, 3),
        "failures": tally.failures,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "wall_s": round(time.monotonic() - started, 1),
        "cpu_s": round(time.process_time() - cpu0, 1),
        "cores": os.cpu_count(), "load_1min": round(os.getloadavg()[0], 2),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def markdown(r: dict[str, Any]) -> str:
    """SAFETY.md's rows for a campaign's results (docs/blocks.py ``--print layer-faults``)."""
    threads = ", ".join(f"{n:,} on the {t} thread" if t != "death" else f"{n} thread deaths"
                        for t, n in r["by_thread"].items())
    verdict = ("every one held" if r["held"] == r["injected"]
               else f"{r['injected'] - r['held']:,} did NOT hold")
    lease = f"bound: one lease, `motor.lease_ms` = {r['lease_ms']:.0f}"
    return (
        "| name | what | figure |\n|---|---|---|\n"
        f"| `layer_campaign` | `{r['command']}` (finished {r['date']}; {len(r['wirings'])} "
        f"wiring{'s' if len(r['wirings']) > 1 else ''}, {len(r['pins'])} pins, "
        f"{len(r['moments'])} moments; {r['wall_s']:,} s, {r['cpu_s']:,} s CPU, "
        f"{r['cores']} cores, load average {r['load_1min']} at the end) | "
        f"{r['injected']:,} faults ({threads}; {r['fired']:,} fired: a run that diverged "
        f"before its call made none): {r['held']:,} held, {verdict} |\n"
        f"| `layer_roller_max` | the roller driven with the lid not closed: the longest "
        f"stretch over every fault ({lease}) | {r['roller_worst_ms']:.1f} ms |\n"
        f"| `layer_turn_max` | the rotator turning with the lid not fully open: the longest "
        f"stretch ({lease}) | {r['turn_worst_ms']:.1f} ms |\n"
        f"| `layer_hang_max` | the reactor hung with the roller driven, to the roller stopped "
        f"by its lease ({lease}) | {r['hang_worst_ms']:.1f} ms |\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                epilog="Writes nothing without --out; exits 1 if any fault "
                                       "did not hold.")
    p.add_argument("--campaign", choices=("layers", "circuit", "storage"), default="layers",
                   help="layers: faults of the firmware's pins and threads (this module); "
                        "circuit: every single fault of the circuit's nets, parts and "
                        "supplies (bench/circuit.py); storage: the state file, the config "
                        "and the code corrupted so that they still read "
                        "(bench/storage_faults.py)")
    p.add_argument("--tier", choices=("fast", "full"), default="fast",
                   help="layers, fast: one wiring, the first call of each pin, operation, "
                        "thread and moment (seconds); full: three wirings, every call "
                        "(minutes). circuit, fast: each net's and part's first fault of each "
                        "kind; full: every one, on two wirings (about a minute)")
    p.add_argument("--mutants", action="store_true",
                   help="switch off each firmware safeguard in turn and run the circuit "
                        "campaign on it: each must make it fail (bench/mutants.py)")
    p.add_argument("--out", type=Path, help="keep the results here (docs/results/...json)")
    args = p.parse_args(argv)
    # Each run logs its fault with a traceback, as the firmware must: not here.
    logging.disable(logging.CRITICAL)
    progress = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    if args.mutants:
        from bench import mutants

        r = mutants.mutants(args.tier, progress=progress)
        print(mutants.table(r), end="")
    elif args.campaign == "storage":
        from bench import storage_faults

        r = storage_faults.campaign(args.tier, progress=progress)
        print(storage_faults.markdown(r), end="")
    elif args.campaign == "circuit":
        from bench import circuit

        r = circuit.campaign(args.tier, progress=progress)
        print(circuit.summary(r), end="")
    else:
        r = campaign(args.tier, progress=progress)
        print(markdown(r), end="")
    for line in r["failures"]:
        print("did not hold:", line)
    if args.out is not None:
        keep(args.out, r)
    return 1 if r["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
