"""The kernel tier's mutants, what must catch each, and the verdict of a run of them.

``bash .ci/kernel/mutants`` runs the whole tier once per mutant (KERNEL_MUTANT=NAME, which
tests/kernel/mutants/sitecustomize.py puts into the firmware's processes), each run's
figures in RUNS/NAME/, then ``python tests/kernel/mutation.py RUNS``: a mutant is caught
when the tier failed, the mutant reached at least one firmware process, and one of the
tests named below failed with its own message for that bug, a test that passed in the
kept run of the tier (docs/results/kernel/pytest.log). The verdicts are kept in
docs/results/kernel/mutants.json and rendered into docs/kernel-tier.md; the exit status
is 1 unless every mutant was caught. ``bash .ci/kernel/mutants --named`` runs, under each
mutant, only the tests that must catch it (``named_tests``), and the kept verdicts say so.
"""

from __future__ import annotations

import datetime
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import report  # noqa: E402

COMMAND = "bash .ci/kernel/mutants"

# name: (what it breaks, [(a test that must catch it, a piece of that test's message)]).
MUTANTS: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "lid_left_noop": (
        "`Actuators.lid_left` does nothing (no pin-thread lid stop)",
        [("test_the_lid_stops_the_roller_on_the_pin_thread_with_the_reactor_hung",
          "lid left closed with the reactor hung")]),
    "lease_never_lapses": (
        "`Actuators.expire` ends nothing (a lease never lapses)",
        [("test_hung_reactor_lease_stops_the_roller_then_watchdog_sigabrt_then_safe_stop",
          "a run must lapse by itself")]),
    "safe_stop_drives_nothing": (
        "`launcher.firmware.safestop.drive_safe` drives nothing (safe-stop prints its usual "
        "line)",
        [("test_sigstop_then_kill_9_mid_shot_then_safe_stop_drives_every_line",
          "was never written low by safe-stop"),
         ("test_hung_reactor_lease_stops_the_roller_then_watchdog_sigabrt_then_safe_stop",
          "was never written low by safe-stop")]),
    "in1_high_at_start": (
        "IN1 (`pins.motor_in1`) written high at start-up (`hal.gpio.open_board`)",
        [("", "between exec and READY=1 (a glitch at start-up): motor_in1 written high")]),
}


# The test a mutant caught by any test ("") runs in ``--named`` mode: the first start.
ANY_START = "test_death.py::test_sigstop_then_kill_9_mid_shot_then_safe_stop_drives_every_line"


def named_tests(name: str) -> list[str]:
    """The pytest node ids of the tests that must catch mutant ``name`` (``.ci/kernel/mutants
    --named`` runs only these: minutes, where the whole tier under a mutant waits out every
    other test's timeouts)."""
    here = Path(__file__).resolve().parent
    ids = []
    for test, _ in MUTANTS[name][1]:
        if not test:
            ids.append(f"tests/kernel/{ANY_START}")
            continue
        (path,) = [p for p in sorted(here.glob("test_*.py"))
                   if f"def {test}(" in p.read_text(encoding="utf-8")]
        ids.append(f"tests/kernel/{path.name}::{test}")
    return sorted(set(ids))


def failures(junit: Path) -> dict[str, str]:
    """Each failed or errored test's name: its message, from a pytest JUnit XML file."""
    out: dict[str, str] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        for bad in (*case.findall("failure"), *case.findall("error")):
            out[case.get("name", "?")] = (bad.get("message") or "") + "\n" + (bad.text or "")
    return out


def baseline_failures(kept: Path = report.KEPT) -> set[str]:
    """The tests that failed in the kept run of the tier (its pytest.log's FAILED lines)."""
    log = kept / "pytest.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return {line.split("::", 1)[1].split(" ", 1)[0] for line in lines
            if line.startswith(("FAILED", "ERROR")) and "::" in line}


def verdict(name: str, run: Path, baseline: set[str]) -> dict[str, object]:
    what, catchers = MUTANTS[name]
    junit = run / "junit.xml"
    applied = (run / "mutant-applied").read_text().splitlines() \
        if (run / "mutant-applied").exists() else []
    failed = failures(junit) if junit.exists() else {}
    caught_by = []
    for test, piece in catchers:
        for failed_test, message in failed.items():
            if (not test or failed_test == test) and failed_test not in baseline \
                    and piece in message:
                caught_by.append((failed_test, piece))
    why = ("the tier did not run (no junit.xml)" if not junit.exists()
           else "the mutant reached no firmware process" if not applied
           else "no test failed" if not failed
           else "not by the tests named, for their reason")
    wall = run / "wall_s"
    return {"name": name, "what": what, "caught": bool(caught_by and applied),
            "why": "" if caught_by and applied else why, "caught_by": sorted(set(caught_by)),
            "failed": sorted(failed), "applied": len(applied),
            "wall_s": int(wall.read_text()) if wall.exists() else None}


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    if argv[0] == "--tests":  # for .ci/kernel/mutants --named
        print(*named_tests(argv[1]), sep="\n")
        return 0
    named = argv[0] == "--named"
    argv = argv[1:] if named else argv
    runs = Path(argv[0])
    names = argv[1:] or list(MUTANTS)
    baseline = baseline_failures()
    results = [verdict(name, runs / name, baseline) for name in names]
    date = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    data = {"command": COMMAND + (" --named" if named else ""), "date": date,
            "mutants": results}
    (report.KEPT / "mutants.json").write_text(json.dumps(data, indent=1) + "\n")
    report.pages.refresh(report.PAGE)
    for r in results:
        by = ", ".join(t for t, _ in r["caught_by"])  # type: ignore[attr-defined]
        print(f"mutants: {r['name']}: " + (f"caught by {by}" if r["caught"]
                                            else f"NOT caught: {r['why']}"))
    print(f"mutants: kept in {(report.KEPT / 'mutants.json').relative_to(report.REPO)}, "
          "docs/kernel-tier.md written again")
    return 0 if all(r["caught"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
