"""Where the benchmarks keep what they measured, and how every generated page is written.

A run's figures go to ``docs/results/NAME.json`` (``keep``); ``docs/blocks.py`` renders the
docs' generated blocks from those files, and docs/PERFORMANCE.md is rendered from
docs/PERFORMANCE.json. Every one of these files is written beside its place and then moved
into it (``write_atomic``), so a power cut or a Ctrl-C mid-write leaves the old file whole.
"""

from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path
from typing import Any

from launcher.firmware.disk import atomic_write

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"


def write_atomic(path: Path, text: str) -> None:
    """``path`` holds ``text`` afterwards, or (cut short) what it held before: the firmware's
    own atomic write (launcher/firmware/disk.py), a page keeping its mode (new ones 0644)."""
    atomic_write(path, text, keep_mode=True, new_mode=0o644)


def keep(path: Path, data: Any, indent: int = 2) -> None:
    """A run's figures, as JSON, at ``path``."""
    write_atomic(path, json.dumps(data, indent=indent, default=list) + "\n")


def run_facts(started: float, cpu0: float) -> dict[str, Any]:
    """When a run finished and what it cost, on which machine: the fields every results file
    ends with (``started``: ``time.monotonic()`` at its start, ``cpu0``:
    ``time.process_time()``)."""
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "wall_s": round(time.monotonic() - started, 1),
        "cpu_s": round(time.process_time() - cpu0, 1),
        "cores": os.cpu_count(), "load_1min": round(os.getloadavg()[0], 2),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
