"""The last ``launcher doctor --keep`` report, kept beside the state file: the console's
`doctor` command shows it, and so does the web panel.

``launcher doctor`` reads the whole Pi (the boot files, the groups, the service's journal),
as root; the service cannot, and does not try. What the doctor kept is what it read then:
the reply says when.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from launcher.firmware.disk import atomic_write
from launcher.firmware.registry import E_UNAVAILABLE, Args, CommandError, Registry, Reply

FILE = "doctor.json"
STATUSES = ("PASS", "WARN", "FAIL")


def report_path(state_path: Path) -> Path:
    """Where the report of the unit whose state file is ``state_path`` is kept."""
    return state_path.parent / FILE


def keep(report: dict[str, Any], path: Path) -> None:
    """Write ``report`` atomically, readable by the service's user (the doctor runs as
    root; the state folder is the service's)."""
    atomic_write(path, json.dumps(report, indent=1) + "\n", keep_mode=True, new_mode=0o644)


def well_formed(report: object) -> bool:
    """Whether ``report`` reads as the doctor's: its checks each a status, item and detail."""
    if not isinstance(report, dict) or not isinstance(report.get("checks"), list):
        return False
    return all(isinstance(c, dict) and c.get("status") in STATUSES
               and isinstance(c.get("item"), str) and isinstance(c.get("detail"), str)
               for c in report["checks"])


def summary(report: dict[str, Any]) -> Reply:
    """The `doctor` reply: when, the model, the counts, and each check but the passes."""
    checks = report["checks"]
    counts = {s.lower(): sum(c.get("status") == s for c in checks) for s in STATUSES}
    rows = [{"status": c["status"], "item": c["item"], "detail": c["detail"],
             "fix": c.get("fix") or ""} for c in checks if c.get("status") != "PASS"]
    return Reply({"at": report.get("at", "unknown"), "model": report.get("model"),
                  "checks": len(checks), **counts}, rows, "checks",
                 lambda r: f"{r['status']} {r['item']}: {r['detail']}"
                           + (f" (fix: {r['fix']})" if r["fix"] else ""))


def register_doctor_commands(reg: Registry, state_path: Path) -> None:
    """`doctor`: the last report kept beside ``state_path``."""

    def doctor(a: Args) -> Reply:
        path = report_path(state_path)
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CommandError(E_UNAVAILABLE, "no doctor report kept here: run `sudo launcher "
                                              "doctor --keep` on the unit") from None
        except (OSError, ValueError) as exc:
            raise CommandError(E_UNAVAILABLE, f"the doctor report {path} does not read "
                                              f"({exc}): run `sudo launcher doctor --keep` "
                                              "again") from None
        if not well_formed(report):
            raise CommandError(E_UNAVAILABLE, f"the doctor report {path} is not a report: "
                                              "run `sudo launcher doctor --keep` again")
        return summary(report)

    reg.register("doctor", "", "the last `launcher doctor --keep` report: when, and what "
                 "did not pass", doctor)
