"""The one-shot verbs off a Pi and with a broken speaker: one line for one failure, said
before anything else, and the sound sheet files each cue under the right heading."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from launcher.cli.main import main
from launcher.core import config, cues

REPO = Path(__file__).resolve().parents[2]


def test_selftest_off_a_pi_says_so_before_asking_for_any_step(capsys, monkeypatch):
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "")
    monkeypatch.setattr("hal.gpio.pi_model", lambda: None)
    assert main(["selftest"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # it printed "do each step when asked" first
    assert captured.err.splitlines() == [
        'launcher selftest: no Raspberry Pi here (or pin_factory = "mock"): '
        "`launcher selftest --auto` walks through the simulated launcher"]


def test_sounds_play_says_a_failed_playback_in_one_line(tmp_path: Path):
    """aplay failing printed the firmware's 'carrying on without sound' warning as well."""
    if not any((Path(d) / "aplay").exists() for d in os.environ.get("PATH", "").split(":")):
        pytest.skip("needs aplay (alsa-utils)")
    conf = tmp_path / "alsa.conf"
    conf.write_text('pcm.!default { @func refer name "pcm.no_such_card" }\n')
    env = {**os.environ, "ALSA_CONFIG_PATH": str(conf), "GPIOZERO_PIN_FACTORY": "mock"}
    proc = subprocess.run([sys.executable, "-m", "launcher.cli.main", "sounds", "play",
                           "wake", "--backend", "aplay"], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: playback failed: aplay exit ")
    assert "carrying on" not in proc.stderr


def test_the_sound_sheet_files_a_cue_of_both_sides_under_neither_side():
    from launcher.cli.sounds import BOTH, SIDES, sheet_rows

    rows = sheet_rows()
    shown = [cue for _, pair in rows for cue in pair if cue is not None]
    assert sorted(shown) == sorted(cues.all_cues())  # each cue once
    for heading, (left, right) in rows:
        if heading == SIDES:
            assert left is not None and left.startswith("mild_")
            assert right is not None and right.startswith("wild_")
        else:
            assert heading == BOTH
            assert all(c in cues.COMMON for c in (left, right) if c is not None)
    # wake, reload, fault and deal_next sat in the Wild column.
    assert {"wake", "reload", "fault", "deal_next"} <= {c for h, pair in rows if h == BOTH
                                                       for c in pair}
    headings = [h for h, _ in rows]
    assert headings == sorted(headings, key=[SIDES, BOTH].index)  # the sides first, then both


def test_install_sh_off_a_pi_says_what_the_service_does_there(tmp_path, monkeypatch, capsys):
    """It promised "the firmware will fall back to the simulated board"; `run` exits 2."""
    root = tmp_path / "root"  # no /proc/device-tree/model: not a Pi
    root.mkdir()
    out = subprocess.run(["bash", str(REPO / "systemd" / "install.sh"), "--dry-run", "--root",
                          str(root)], capture_output=True, text=True, check=True).stdout
    [line] = [x for x in out.splitlines() if x.startswith("==> not a Raspberry Pi (")]
    assert "fall back" not in line
    assert "`launcher run` exits 2" in line and "`launcher run --simulated`" in line
    # ... and so it does.
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "")
    monkeypatch.setattr("hal.gpio.pi_model", lambda: None)
    assert main(["run"]) == 2
    assert "this is not a Raspberry Pi" in capsys.readouterr().err


def test_install_sh_web_tls_edits_a_new_config_into_one_that_serves_the_panel(tmp_path):
    """The [web] edits install.sh --web --web-tls plans, run on a copy of the default config:
    the config they leave loads, with the panel on over HTTPS at the installer's files."""
    root = tmp_path / "root"
    root.mkdir()
    plan = subprocess.run(["bash", str(REPO / "systemd" / "install.sh"), "--dry-run", "--web",
                           "--web-tls", "--root", str(root)],
                          capture_output=True, text=True, check=True).stdout
    edits = [line.removeprefix("+ ") for line in plan.splitlines()
             if line.startswith("+ sed -i '/^\\[web\\]/")]
    assert len(edits) == 3, plan  # enabled, tls_cert, tls_key
    cfg = tmp_path / "launcher.toml"
    cfg.write_text((REPO / "launcher" / "default.toml").read_text())
    for edit in edits:
        subprocess.run(["bash", "-c", edit.replace("/etc/launcher/launcher.toml", str(cfg))],
                       check=True)
    web = config.load(cfg, circuit_rules=False).web
    assert web.enabled is True
    assert (web.tls_cert, web.tls_key) == ("/etc/launcher/web.crt", "/etc/launcher/web.key")
