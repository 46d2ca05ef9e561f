"""Config: defaults load, bad values name their key, unknown keys are refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from launcher.cli.main import main
from launcher.core import config
from launcher.core.errors import ConfigError, LauncherError
from launcher.firmware.disk import atomic_write


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "launcher.toml"
    p.write_text(text)
    return p


def test_defaults_feel_like_the_original_toy():
    s = config.load()
    assert s.luck.mild.max_dry == 4
    assert s.luck.mild.sizes == (1, 2, 3, 4, 5)
    assert s.timing.sleep_after == 300.0
    assert s.timing.debounce == 0.030
    assert s.pins.exit_beam == 27


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[luck.mild]\nhazard = [0.3, 0.3, 1.4, 1.0]\n",
         "luck.mild.hazard[2] = 1.4: must be within 0..1"),
        ("[luck.wild]\nhazard = [0.3, 0.5]\n",
         "luck.wild.hazard[1] = 0.5: the last entry must be 1.0 (it caps the dry streak)"),
        ("[luck.mild]\nweights = [1, 2]\n",
         "luck.mild.weights = [1.0, 2.0]: must have one weight per size (5)"),
        ("[timing]\njam_timeout_ms = 0\n", "timing.jam_timeout_ms = 0: must be within 50..10000"),
        ("[timing]\nsleep_after_s = \"soon\"\n", "timing.sleep_after_s = 'soon': must be a number"),
        ("[pins]\nled = 17\n", "pins.led = 17: already used by pins.button"),
        ("[pins]\nbutton = 40\n", "pins.button = 40: must be at most 27"),
        ("[board]\npin_factory = \"rpigpio\"\n",
         "board.pin_factory = 'rpigpio': must be one of auto, lgpio, pigpio, native, mock"),
        ("[motor]\nturbo = true\n", "motor.turbo = True: unknown key"),
        ("[luck]\nmild = 3\n", "luck.mild = 3: must be a table"),
    ],
)
def test_bad_values_name_the_key(tmp_path, text, message):
    with pytest.raises(ConfigError) as err:
        config.load(write(tmp_path, text))
    assert str(err.value) == message
    assert isinstance(err.value, ValueError) and isinstance(err.value, LauncherError)


def test_no_beam_means_timed_shots(tmp_path):
    s = config.load(write(tmp_path, "[pins]\nexit_beam = -1\n"))
    assert s.pins.exit_beam is None


def test_broken_toml_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="not valid TOML"):
        config.load(write(tmp_path, "[luck\n"))


def test_config_check_exits_2_with_one_line(tmp_path, capsys):
    bad = write(tmp_path, "[luck.mild]\nhazard = [0.3, 0.3, 1.4, 1.0]\n")
    assert main(["config", "check", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["config error: luck.mild.hazard[2] = 1.4: must be within 0..1"]
    good = write(tmp_path, "[luck]\nseed = 5\n")
    assert main(["config", "check", str(good)]) == 0


def test_config_check_as_a_process(tmp_path):
    bad = write(tmp_path, "[timing]\nmax_run_ms = -5\n")
    proc = subprocess.run([sys.executable, "-m", "launcher.cli.main", "config", "check", str(bad)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "config error: timing.max_run_ms = -5: must be within 100..15000"


def test_set_key_checks_and_round_trips_through_toml(tmp_path):
    raw = config.load_raw(None)
    new = config.set_key(raw, "luck.mild.hazard", [0.5, 1.0])
    assert config.settings_from_dict(new).luck.mild.hazard == (0.5, 1.0)
    with pytest.raises(ConfigError, match=r"luck\.mild\.hazard\[0\] = -1"):
        config.set_key(raw, "luck.mild.hazard", [-1, 1.0])
    with pytest.raises(ConfigError, match="unknown key"):
        config.set_key(raw, "luck.mild.nope", 1)
    path = tmp_path / "saved.toml"
    atomic_write(path, config.to_toml(new))
    assert config.load(path) == config.settings_from_dict(new)


def test_parse_value_reads_toml_values():
    assert config.parse_value("0.25") == 0.25
    assert config.parse_value("[0.2, 1.0]") == [0.2, 1.0]
    assert config.parse_value("true") is True
    assert config.parse_value("pigpio") == "pigpio"


def test_every_default_key_is_commented():
    """The default file documents every key: each key line has a comment above or beside it."""
    lines = config.default_text().splitlines()
    for i, line in enumerate(lines):
        if "=" in line and not line.lstrip().startswith("#"):
            above = lines[i - 1].lstrip()
            assert "#" in line or above.startswith("#") or "=" in above, line
