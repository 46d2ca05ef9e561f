"""The interlocks in wall time, with the reactor thread free, blocked asleep or spinning.

``python -m bench.interlock [--tries N] [--out docs/results/interlock.json]``

The harness is ``launcher/sim/interlock.py`` (the firmware on a real reactor thread over
mock pins), which ``tests/firmware/test_interlock_threads.py`` uses too. With ``--out`` the
measurement is kept in that file; ``docs/blocks.py`` renders hardware/SAFETY.md's measured
figures from it (``markdown``), and ``make test`` checks that the page still says so.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
from pathlib import Path
from typing import Any

from bench.keep import RESULTS as KEPT
from bench.keep import keep
from launcher.firmware.runner import tune_switch_interval
from launcher.sim.interlock import Unit, lapses, lid_stops

RESULTS = KEPT / "interlock.json"
COMMAND = "python -m bench.interlock --out docs/results/interlock.json"


def summary(xs: list[float]) -> dict[str, float]:
    return {"tries": len(xs), "p50_ms": statistics.median(xs) * 1e3,
            "p95_ms": statistics.quantiles(xs, n=20)[18] * 1e3, "max_ms": max(xs) * 1e3}


def measure(tries: int) -> dict[str, Any]:
    before = sys.getswitchinterval()
    tune_switch_interval()  # as `launcher run` does
    out: dict[str, Any] = {"tries": tries, "switch_interval_ms": sys.getswitchinterval() * 1e3}
    try:
        unit = Unit()
        try:
            out["lease_ms"] = unit.settings.motor.lease * 1e3
            for how in (None, "sleep", "spin"):
                out[f"lid_stop_{how or 'free'}"] = summary(lid_stops(unit, how, tries))
            for how in ("sleep", "spin"):
                out[f"lapse_{how}"] = summary(lapses(unit, how, tries))
            out["stalls"] = unit.stalls  # tries made again: the process stalled past a lease
        finally:
            unit.close()
    finally:
        sys.setswitchinterval(before)
    return out


def _row(name: str, what: str, x: dict[str, float]) -> str:
    return (f"| `{name}` | {what} | {x['p50_ms']:.3f} / {x['p95_ms']:.3f} / "
            f"{x['max_ms']:.3f} ms ({x['tries']} tries) |")


def markdown(r: dict[str, Any]) -> str:
    lease = r["lease_ms"]
    lines = [
        f"Measured here by `{COMMAND}` (the firmware "
        "on a real reactor thread over gpiozero's mock pins; the lid's edge delivered on the "
        "thread that moves the pin, as lgpio's callback thread delivers it; switch interval "
        f"{r['switch_interval_ms']:g} ms as `launcher run` sets it; a 2-core machine shared "
        "with other work, so the worst try is the OS's scheduling as much as the "
        "firmware's). Figures are p50 / p95 / max; the run is kept in "
        "`docs/results/interlock.json`, from which `docs/blocks.py` renders this section. "
        f"{r.get('stalls', 0)} tries were made again because the whole process stalled for "
        "longer than a lease before the try began (the guard rightly ended that run first; "
        "`launcher/sim/interlock.py`).",
        "",
        "| name | what | p50 / p95 / max |",
        "|---|---|---|",
        _row("lid_stop", "lid edge → roller's pins low, the reactor free",
             r["lid_stop_free"]),
        _row("lid_stop_hung", "… the reactor blocked in a sleep", r["lid_stop_sleep"]),
        _row("lid_stop_spinning", "… the reactor spinning (holding the GIL)",
             r["lid_stop_spin"]),
        _row("lease_lapse", f"reactor blocked in a sleep → roller stopped by its lease "
             f"(`motor.lease_ms` = {lease:g})", r["lapse_sleep"]),
        _row("lease_lapse_spinning", "… the reactor spinning", r["lapse_spin"]),
        "",
        "The kernel tier's figures (the real firmware process and the real lgpio on the "
        "kernel's gpio-sim chip: `kill -9`, the watchdog's kill and safe-stop, `SIGSTOP`) "
        "are in [docs/kernel-tier.md](../docs/kernel-tier.md).",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    # Each lapse is logged as an error by design; here they are the measurement.
    logging.getLogger("launcher.firmware.actuators").setLevel(logging.CRITICAL)
    ap = argparse.ArgumentParser(prog="python -m bench.interlock", description=__doc__.split(
        "\n\n")[0])
    ap.add_argument("--tries", type=int, default=200, help="tries per figure (default 200)")
    ap.add_argument("--out", type=Path, help="keep the measurement in this JSON file "
                    "(docs/results/interlock.json, which hardware/SAFETY.md is rendered "
                    "from); without it, the JSON goes to standard output")
    args = ap.parse_args(argv)
    r = measure(args.tries)
    if args.out is None:
        print(json.dumps(r, indent=2))
    else:
        keep(args.out, r)
        print(f"bench.interlock: kept the figures in {args.out}; `python docs/blocks.py` "
              "writes them into hardware/SAFETY.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
