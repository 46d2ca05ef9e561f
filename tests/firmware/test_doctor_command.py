"""The console's `doctor`: the last `launcher doctor --keep` report beside the state file,
when it was made and what did not pass; a missing or broken report is a user's error that
says what to run, never a fault of the launcher."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.firmware.doctor_report import keep, register_doctor_commands
from launcher.firmware.registry import E_UNAVAILABLE, CommandError, Registry, reply_lines

REPORT = {"model": "Raspberry Pi 4 Model B Rev 1.4", "ok": False, "at": "2026-12-06 21:00 UTC",
          "checks": [{"status": "PASS", "item": "board", "detail": "Pi 4", "fix": None},
                     {"status": "WARN", "item": "watchdog", "detail": "no drop-in", "fix": ""},
                     {"status": "FAIL", "item": "service user",
                      "detail": "launcher is not in gpio",
                      "fix": "sudo usermod -aG gpio launcher"}]}


def ask(state: Path, json_mode: bool = False) -> list[str]:
    reg = Registry(("doctor",))
    register_doctor_commands(reg, state)
    return reply_lines(reg.dispatch("doctor", lambda spec: None), json_mode)


def test_the_kept_report_when_and_what_did_not_pass(tmp_path: Path) -> None:
    keep(REPORT, tmp_path / "doctor.json")
    lines = ask(tmp_path / "state.json")
    assert lines[:2] == ["// WARN watchdog: no drop-in",
                         "// FAIL service user: launcher is not in gpio (fix: sudo usermod "
                         "-aG gpio launcher)"]
    assert lines[-1].startswith("ok at=") and "fail=1" in lines[-1] and "warn=1" in lines[-1]
    data = json.loads(ask(tmp_path / "state.json", json_mode=True)[-1])
    assert data["data"]["pass"] == 1 and [c["item"] for c in data["checks"]] == [
        "watchdog", "service user"]


@pytest.mark.parametrize("content", [None, "{not json", "[]", '{"checks": [{"status": 1}]}',
                                     '{"checks": "x"}'])
def test_no_report_or_a_broken_one_says_what_to_run(tmp_path: Path, content: str | None) -> None:
    if content is not None:
        (tmp_path / "doctor.json").write_text(content)
    with pytest.raises(CommandError) as got:
        ask(tmp_path / "state.json")
    assert got.value.code == E_UNAVAILABLE and "launcher doctor --keep" in got.value.message
