"""Keeps one kernel tier run's figures in docs/results/kernel/, and the page is rendered again.

Usage: ``bash .ci/kernel/report`` (runs the tier, then this), or on a run's figures:
``python tests/kernel/report.py RESULTS_DIR`` (RESULTS_DIR: KERNEL_RESULTS of a run).
``python tests/kernel/report.py --runs DIR...`` keeps the verdict and wall time of each of
those runs (``make test-kernel`` with ``KERNEL_RESULTS=DIR``, one after another) in
``docs/results/kernel/runs.json``, which the page shows.

The tier only writes results: this keeps what docs/kernel-tier.md is rendered from (the
figures' files, the verdict lines of the pytest log, and the date), and the page is then
rendered by the one renderer of generated pages (bench/pages.py, as ``python docs/blocks.py``
does), so that a test renders it again from them and finds any hand edit
(tests/docs/test_generated.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script: the repo's bench
from bench import pages
from bench.kernel_tier import COMMAND, DURATION_LINE, KEPT, REPO, RUN, load_figures

PAGE = REPO / "docs" / "kernel-tier.md"


def keep(folder: Path, dest: Path, date: str) -> None:
    """Copy what ``render`` reads of a run into ``dest``: the figures' files, and of the
    pytest log only the lines the page shows (its verdicts and summary)."""
    import shutil

    # .ci/kernel/mutants's verdicts and the runs one after another, kept across runs
    kept = {name: (dest / name).read_text() for name in ("mutants.json", "runs.json")
            if (dest / name).exists()}
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for name, text in kept.items():
        (dest / name).write_text(text)
    for path in sorted(folder.glob("*.json")):
        shutil.copy(path, dest / path.name)
    if (folder / "wall_s").exists():
        shutil.copy(folder / "wall_s", dest / "wall_s")
    log = folder / "pytest.log"
    if log.exists():
        lines = [line for line in log.read_text(errors="replace").splitlines()
                 if line.startswith(("FAILED", "ERROR")) or " passed" in line
                 or " failed" in line or DURATION_LINE.match(line)]
        (dest / "pytest.log").write_text("".join(f"{line}\n" for line in lines))
    (dest / RUN).write_text(json.dumps({"command": COMMAND, "date": date}, indent=2) + "\n")


def run_row(folder: Path) -> dict[str, Any]:
    """One run of the tier: when, its wall time, pytest's summary, and whether it stalled."""
    import datetime

    log = folder / "pytest.log"
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    summary = next((line.strip("= ") for line in reversed(lines)
                    if " passed" in line or " failed" in line), "no summary: the VM ended first")
    phases = load_figures(folder, "phases") or {}
    started = phases.get("started")
    return {"started": datetime.datetime.fromtimestamp(started, datetime.UTC).strftime(
                "%Y-%m-%d %H:%M UTC") if started else None,
            "wall_s": int((folder / "wall_s").read_text()) if (folder / "wall_s").exists()
            else None,
            "pytest": summary, "stalled": (folder / "stall").is_dir(),
            "passed": (folder / "rc").exists() and (folder / "rc").read_text().strip() == "0"}


def _run_folder(text: str) -> Path:
    """A KERNEL_RESULTS folder of one run: refused, naming it, unless a run wrote it."""
    import argparse

    folder = Path(text)
    if not (folder / "pytest.log").is_file():
        raise argparse.ArgumentTypeError(
            f"{text}: not a kernel tier run's results (no pytest.log in it); give the "
            "KERNEL_RESULTS folder of a `make test-kernel` run")
    return folder


def main(argv: list[str]) -> int:
    import argparse
    import datetime

    parser = argparse.ArgumentParser(
        prog="python tests/kernel/report.py",
        description="Keep one kernel tier run's figures in docs/results/kernel/, or the "
                    "verdicts of runs one after another (--runs); then docs/kernel-tier.md is "
                    "rendered again from what is kept.")
    parser.add_argument("results", nargs="?", type=_run_folder,
                        help="KERNEL_RESULTS folder of one run")
    parser.add_argument("--runs", nargs="+", type=_run_folder, metavar="DIR",
                        help="keep each run's start, wall time and verdict in "
                             "docs/results/kernel/runs.json, in the order given")
    args = parser.parse_args(argv)
    if (args.runs is None) == (args.results is None):
        parser.error("give one RESULTS folder, or --runs DIR...")
    if args.runs is not None:
        runs = {"command": "python tests/kernel/report.py --runs DIR...",
                "runs": [run_row(d) for d in args.runs]}
        (KEPT / "runs.json").write_text(json.dumps(runs, indent=1) + "\n")
        print(f"report: kept {len(runs['runs'])} runs in {KEPT.relative_to(REPO)}/runs.json")
    else:
        keep(args.results, KEPT, datetime.datetime.now(datetime.UTC).strftime(
            "%Y-%m-%d %H:%M UTC"))
        print(f"report: kept the run's figures in {KEPT.relative_to(REPO)}")
    pages.refresh(PAGE)  # with the kept mutants' table and runs, if any
    print(f"report: rendered {PAGE.relative_to(REPO)}")
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
