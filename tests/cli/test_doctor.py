"""``launcher doctor`` on fake roots: a healthy Pi 4, a healthy Pi 5, and one fixture per FAIL.

Each fixture under fixtures/doctor/ is a folder standing for ``/`` (``root/``) and the
recorded outputs of the commands (``commands.toml``), or a ``fixture.toml`` naming a base
fixture and what differs from it: files replaced or removed, command outputs changed, and
the checks it must FAIL (``expect``) or WARN (``warn``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from launcher.cli.doctor import FAIL, PASS, WARN, diagnose, gather, recorded
from launcher.cli.main import main

FIXTURES = Path(__file__).parent / "fixtures" / "doctor"
NAMES = sorted(p.name for p in FIXTURES.iterdir() if (p / "fixture.toml").exists())
REPO = Path(__file__).resolve().parents[2]


def toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string of ASCII text is a TOML basic string


def build(name: str, where: Path) -> tuple[Path, Path, dict]:
    """The fixture laid out under ``where``: (root folder, commands file, its fixture.toml)."""
    spec = tomllib.loads((FIXTURES / name / "fixture.toml").read_text())
    base = FIXTURES / spec.get("base", name)
    root = where / "root"
    shutil.copytree(base / "root", root, symlinks=True)
    for rel, text in spec.get("files", {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text.lstrip("\n"))
    for rel in spec.get("remove", []):
        (root / rel).unlink()
    table = tomllib.loads((base / "commands.toml").read_text())
    for key, entry in spec.get("commands", {}).items():
        table[key] = entry
    commands = where / "commands.toml"
    commands.write_text("".join(
        f"[{key}]\nrc = {int(entry.get('rc', 0))}\nout = {toml_string(entry.get('out', ''))}\n"
        for key, entry in table.items()))
    return root, commands, spec


@pytest.mark.parametrize("name", NAMES)
def test_each_fixture_fails_and_warns_exactly_where_it_should(name, tmp_path):
    root, commands, spec = build(name, tmp_path)
    results = diagnose(gather(root, recorded(commands)))
    assert {r.item for r in results if r.status == FAIL} == set(spec["expect"])
    assert {r.item for r in results if r.status == WARN} == set(spec.get("warn", []))
    for r in results:
        assert r.status in (PASS, WARN, FAIL)
        if r.status != PASS:
            assert r.fix, f"{r.item} says what is wrong but not what to do"


def test_the_healthy_fixtures_cover_both_pin_factories(tmp_path):
    seen = {}
    for name in ("healthy-pi4", "healthy-pi5"):
        root, commands, _ = build(name, tmp_path / name)
        board = next(r for r in diagnose(gather(root, recorded(commands))) if r.item == "board")
        seen[name] = board.detail
    assert "pin factory pigpio" in seen["healthy-pi4"]
    assert "pin factory lgpio" in seen["healthy-pi5"]


@pytest.mark.parametrize(("name", "code"), [("healthy-pi4", 0), ("healthy-pi5", 0),
                                            ("fail-pigpiod-down", 1), ("fail-pin-on-i2s", 1)])
def test_the_command_exits_non_zero_on_any_fail(name, code, tmp_path, capsys):
    root, commands, _ = build(name, tmp_path)
    assert main(["doctor", "--root", str(root), "--recorded", str(commands)]) == code
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("launcher doctor: Raspberry Pi")
    assert (f"{FAIL}  " in out) == (code == 1)


def test_json_gives_every_check_with_its_status_and_fix(tmp_path, capsys):
    root, commands, _ = build("fail-user-not-in-gpio", tmp_path)
    assert main(["doctor", "--json", "--root", str(root), "--recorded", str(commands)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["model"] == "Raspberry Pi 4 Model B Rev 1.4" and report["ok"] is False
    failed = [c for c in report["checks"] if c["status"] == FAIL]
    assert failed == [{"status": FAIL, "item": "service user",
                       "detail": "launcher is not in gpio",
                       "fix": "sudo usermod -aG gpio launcher"}]


def test_off_a_pi_it_says_so_in_one_line_and_exits_2(tmp_path, capsys):
    (tmp_path / "proc/device-tree").mkdir(parents=True)
    (tmp_path / "proc/device-tree/model").write_bytes(b"Generic x86 PC\x00")
    assert main(["doctor", "--root", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1 and "not a Raspberry Pi" in captured.err
    # What to run instead, off a Pi.
    assert "`launcher config check FILE`" in captured.err
    assert "`launcher selftest --auto`" in captured.err


def test_off_a_pi_json_answers_in_json_on_stdout(tmp_path, capsys):
    """It printed the plain line to stderr and no JSON at all."""
    assert main(["doctor", "--json", "--root", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report == {"model": None, "checks": [], "ok": False,
                      "error": f"not a Raspberry Pi (no Raspberry Pi in "
                               f"{tmp_path / 'proc/device-tree/model'})"}
    assert captured.err == ""


def test_docs_show_the_healthy_pi_5_output_as_the_command_prints_it(tmp_path, capsys):
    base = FIXTURES / "healthy-pi5"
    assert main(["doctor", "--root", str(base / "root"),
                 "--recorded", str(base / "commands.toml")]) == 0
    printed = capsys.readouterr().out
    doc = (REPO / "docs" / "doctor.md").read_text()
    assert printed in doc, "docs/doctor.md is out of date: paste the command's output"


def test_the_doctor_does_not_import_gpiozero():
    # It runs on a Pi Zero: no gpiozero, no firmware, no simulator to import.
    code = ("import sys; import launcher.cli.doctor; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('gpiozero', 'serial', 'numpy', 'matplotlib') or m.startswith('launcher.firmware')"
            " or m.startswith('launcher.sim')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(("name", "item", "named"), [
    ("fail-alsa-default-is-hdmi", "alsa default",
     ["/etc/asound.conf", "defaults.pcm.card MAX98357A", "defaults.ctl.card MAX98357A"]),
    ("fail-amp-sd-on-a-firmware-pin", "amp SD pin",
     ["/boot/firmware/config.txt", "dtoverlay=max98357a,no-sdmode"]),
    ("fail-no-strict-gpiod", "strict_gpiod", ["/boot/firmware/config.txt", "dtparam=strict_gpiod"]),
    ("fail-serial0-is-pi5-debug-connector", "serial console",
     ["/boot/firmware/config.txt", "dtparam=uart0=on", "/etc/launcher/launcher.toml",
      'console.port = "/dev/ttyAMA0"']),
    ("fail-no-watchdog", "watchdog",
     ["/etc/systemd/system.conf.d/launcher-watchdog.conf", "[Manager]", "RuntimeWatchdogSec=10s"]),
    ("fail-pigpiod-without-t0", "pigpiod -t 0",
     ["/etc/systemd/system/pigpiod.service.d/launcher.conf",
      "ExecStart=/usr/bin/pigpiod -l -t 0 -s 10"]),
])
def test_each_new_fail_names_the_file_and_the_exact_line(name, item, named, tmp_path):
    root, commands, _ = build(name, tmp_path)
    [result] = [r for r in diagnose(gather(root, recorded(commands))) if r.item == item]
    assert result.status == FAIL
    for text in named:
        assert text in result.fix, (text, result.fix)


def test_the_sd_pin_fail_says_which_firmware_pin_is_there(tmp_path):
    for name, pin, key in (("fail-amp-sd-on-a-firmware-pin", 4, "power_contact_sense"),
                           ("fail-amp-sdmode-pin-on-amp-enable", 16, "amp_enable")):
        root, commands, _ = build(name, tmp_path / name)
        [result] = [r for r in diagnose(gather(root, recorded(commands)))
                    if r.item == "amp SD pin"]
        assert f"GPIO {pin}, which is pins.{key}" in result.detail


@pytest.mark.parametrize("name", ["healthy-pi4", "healthy-pi5"])
def test_the_healthy_fixtures_hold_what_install_sh_writes(name, tmp_path):
    # A dry run on a copy of the fixture's root (the same model, kernel parameters and
    # config.txt) finds its launcher block already there, as install.sh would write it.
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / name / "root", root, symlinks=True)
    bin_dir = tmp_path / "bin"  # apt-cache as Bookworm's answers: pigpio is there
    bin_dir.mkdir()
    (bin_dir / "apt-cache").write_text('#!/bin/sh\nprintf "%s:\\n  Candidate: 1.79-1\\n" "$2"\n')
    (bin_dir / "apt-cache").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    out = subprocess.run(["bash", str(REPO / "systemd/install.sh"), "--dry-run", "--root",
                          str(root)], capture_output=True, text=True, check=True, env=env).stdout
    assert f"==> {root}/boot/firmware/config.txt already has the launcher block" in out
    # The files it writes outside the boot partition are printed in full.
    fixture = FIXTURES / name / "root"
    asound = (fixture / "etc/asound.conf").read_text()
    assert (f"+ append to /etc/asound.conf:\n{asound}" in out + "\n"
            or "==> /etc/asound.conf already has the launcher block" in out)
    watchdog = (fixture / "etc/systemd/system.conf.d/launcher-watchdog.conf").read_text()
    assert (f"+ write /etc/systemd/system.conf.d/launcher-watchdog.conf:\n{watchdog}"
            in out + "\n") or "launcher-watchdog.conf exists" in out
    dropin = fixture / "etc/systemd/system/pigpiod.service.d/launcher.conf"
    assert dropin.exists() == (name == "healthy-pi4")  # pigpio chosen in its config
    if dropin.exists():
        assert dropin.read_text() == (REPO / "systemd/pigpiod-launcher.conf").read_text()
        assert "pigpiod.service.d/launcher.conf" in out


def test_an_old_units_nsleep_on_a_pin_pulled_up_at_power_on_is_a_config_fail(tmp_path):
    """nSLEEP on GPIO 6 (the wiring before): the config's own rule, named with its fix."""
    root, commands, _ = build("fail-nsleep-on-a-pin-pulled-up", tmp_path)
    [result] = [r for r in diagnose(gather(root, recorded(commands))) if r.item == "config"]
    assert result.status == FAIL
    assert "pins.motor_sleep = 6: GPIO 6 is pulled up at power-on" in result.detail
    assert "GPIO 9-27" in result.detail


@pytest.mark.parametrize(("name", "item", "named"), [
    ("fail-boot-pulls-missing", "boot pulls",
     ["GPIO 11 (pins.motor_sleep)", "GPIO 16 (pins.amp_enable)", "GPIO 24 (pins.rotator)"]),
    ("fail-nc-twin-off", "safety pins",
     ["pins.lid_closed_nc = -1", "pins.power_contact_sense = -1"]),
])
def test_the_circuit_checks_name_each_pin_they_miss(name, item, named, tmp_path):
    root, commands, _ = build(name, tmp_path)
    [result] = [r for r in diagnose(gather(root, recorded(commands))) if r.item == item]
    assert result.status == FAIL
    for text in named:
        assert text in result.detail, (text, result.detail)
    if item == "boot pulls":
        assert "GPIO 12" not in result.detail and "GPIO 13" not in result.detail  # on it


@pytest.mark.parametrize(("name", "pin_text", "why"), [
    ("fail-spi0-on", "pins.motor_sleep = 11 is SPI0's clock (SCLK)", "dtparam=spi=on"),
    ("fail-i2c1-on-by-the-kernel", "pins.rotator_contact_sense = 2 is I2C1's data (SDA1)",
     "/dev/i2c-1"),
])
def test_a_bus_left_on_over_the_firmware_s_pins_names_the_pin_and_what_turned_it_on(
        name, pin_text, why, tmp_path):
    root, commands, _ = build(name, tmp_path)
    [result] = [r for r in diagnose(gather(root, recorded(commands))) if r.item == "config"]
    assert result.status == FAIL
    assert pin_text in result.detail and why in result.detail
    assert why in result.fix and "sudo reboot" in result.fix


def test_keep_writes_the_report_beside_the_state_file_for_the_console(tmp_path, capsys):
    """`--keep` is the one thing the doctor writes: the report, with when it was made, in
    the state folder, readable by the service's user; the console's `doctor` shows it."""
    from launcher.firmware.doctor_report import report_path, summary, well_formed

    root, commands, _ = build("fail-user-not-in-gpio", tmp_path)
    before = sorted(p for p in root.rglob("*"))
    assert main(["doctor", "--keep", "--root", str(root), "--recorded", str(commands)]) == 1
    kept = root / "var/lib/launcher/doctor.json"
    assert kept == root / report_path(Path("/var/lib/launcher/state.json")).relative_to("/")
    assert sorted(p for p in root.rglob("*")) == sorted([*before, kept])  # nothing else
    assert kept.stat().st_mode & 0o777 == 0o644
    assert f"kept in {kept}" in capsys.readouterr().err
    report = json.loads(kept.read_text())
    assert well_formed(report) and report["model"] == "Raspberry Pi 4 Model B Rev 1.4"
    assert report["at"].endswith(" UTC")
    reply = summary(report)
    assert reply.data["fail"] == 1 and reply.data["checks"] == len(report["checks"])
    assert [r["item"] for r in reply.rows if r["status"] == FAIL] == ["service user"]
    assert all(r["status"] != PASS for r in reply.rows)


def test_without_keep_the_doctor_writes_nothing(tmp_path):
    root, commands, _ = build("healthy-pi4", tmp_path)
    before = sorted((p, p.stat().st_mtime_ns) for p in root.rglob("*"))
    assert main(["doctor", "--root", str(root), "--recorded", str(commands)]) == 0
    assert sorted((p, p.stat().st_mtime_ns) for p in root.rglob("*")) == before
