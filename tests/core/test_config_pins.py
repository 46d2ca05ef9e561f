"""Pins the Pi's own functions hold are refused, with the reason, by the file and the console."""

from __future__ import annotations

from pathlib import Path

import pytest

from hal.pins import reserved_pins
from launcher.core import config
from launcher.core.errors import ConfigError


def test_reserved_pins_follow_what_is_enabled():
    assert set(reserved_pins(i2s=False, uart=False)) == {0, 1}
    assert set(reserved_pins(i2s=True, uart=False)) == {0, 1, 18, 19, 21}
    assert set(reserved_pins(i2s=False, uart=True)) == {0, 1, 14, 15}
    everything = reserved_pins(i2s=True, uart=True)
    assert set(everything) == {0, 1, 14, 15, 18, 19, 21}
    assert 20 not in everything  # I2S data in: only a microphone would use it
    assert all(reason for reason in everything.values())


@pytest.mark.parametrize(("text", "message"), [
    ("[pins]\nled = 18\n", 'pins.led = 18: reserved for the I2S bit clock of the amplifier '
                           '(PCM_CLK) while audio.backend is not "null"'),
    ("[pins]\nled = 14\n", "pins.led = 14: reserved for the UART console's TX (TXD0) while "
                           "console.port is the UART (/dev/serial0)"),
    ("[pins]\nled = 0\n", "pins.led = 0: reserved for the HAT ID EEPROM bus (ID_SD) on every Pi"),
    ("[pins]\nbutton = 1\n[audio]\nbackend = \"null\"\n[console]\nport = \"\"\n",
     "pins.button = 1: reserved for the HAT ID EEPROM bus (ID_SC) on every Pi"),
    ("[pins]\nhome = 21\n[console]\nport = \"\"\n",
     'pins.home = 21: reserved for the I2S data to the amplifier (PCM_DOUT) while '
     'audio.backend is not "null"'),
    ("[pins]\nexit_beam = 15\n[console]\nport = \"/dev/ttyAMA0\"\n",
     "pins.exit_beam = 15: reserved for the UART console's RX (RXD0) while console.port is "
     "the UART (/dev/serial0)"),
])
def test_a_reserved_pin_is_refused_naming_the_key_and_the_reason(tmp_path: Path, text: str,
                                                                message: str):
    path = tmp_path / "launcher.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        config.load(path)
    assert str(err.value) == message


@pytest.mark.parametrize("text", [
    '[pins]\nled = 18\n[audio]\nbackend = "null"\n',  # no amplifier fitted
    '[pins]\nled = 14\n[console]\nport = "/dev/ttyGS0"\n',  # the console is on USB
    '[pins]\nled = 15\n[console]\nport = ""\n',  # no serial console
    '[pins]\nled = 20\n',
])
def test_a_pin_is_free_once_what_holds_it_is_off(tmp_path: Path, text: str):
    path = tmp_path / "launcher.toml"
    path.write_text(text)
    assert config.load(path).pins.led in (14, 15, 18, 20)


def test_console_config_set_refuses_a_reserved_pin(settings):
    raw = config.default_raw()
    with pytest.raises(ConfigError, match=r"pins.led = 18: reserved for the I2S bit clock"):
        config.set_key(raw, "pins.led", 18)
    with pytest.raises(ConfigError, match=r"pins.led = 0: reserved for the HAT ID EEPROM"):
        config.set_key(raw, "pins.led", 0)
    freed = config.set_key(raw, "audio.backend", "null")
    assert config.set_key(freed, "pins.led", 18)["pins"]["led"] == 18
    # Turning I2S back on with a pin on it is refused too, naming that pin.
    with pytest.raises(ConfigError, match=r"pins.led = 18: reserved"):
        config.set_key(config.set_key(freed, "pins.led", 18), "audio.backend", "auto")


# -- the rotator's optional second input and how it stops at home ---------------------------


def test_rotator_in2_is_optional_and_checked_like_any_pin(tmp_path: Path):
    assert config.load().pins.rotator_in2 is None  # -1 by default: not wired
    path = tmp_path / "launcher.toml"
    path.write_text("[pins]\nrotator_in2 = 9\n")
    assert config.load(path).pins.rotator_in2 == 9
    for text, message in [
        ("[pins]\nrotator_in2 = 4\n", "pins.rotator_in2 = 4: GPIO 4 is pulled up at power-on"),
        ("[pins]\nrotator_in2 = 24\n", "pins.rotator_in2 = 24: already used by pins.rotator"),
        ("[pins]\nrotator_in2 = 19\n", "pins.rotator_in2 = 19: reserved for the I2S frame clock"),
        ("[pins]\nrotator_in2 = 0\n", "pins.rotator_in2 = 0: reserved for the HAT ID EEPROM"),
        ("[pins]\nrotator_in2 = -2\n", "pins.rotator_in2 = -2: must be at least -1"),
        ("[pins]\nrotator = -1\n", "pins.rotator = -1: must be at least 0"),
    ]:
        path.write_text(text)
        with pytest.raises(ConfigError) as err:
            config.load(path)
        assert str(err.value).startswith(message), str(err.value)


@pytest.mark.parametrize(("text", "message"), [
    ("brake_ms = 5", "rotator.brake_ms = 5: must be within 10..2000"),
    ("brake_ms = true", "rotator.brake_ms = True: must be a number"),
    ("creep_speed = 0.01", "rotator.creep_speed = 0.01: must be 0 (never turn back) or within "
                           "0.05..1"),
    ("creep_speed = 1.5", "rotator.creep_speed = 1.5: must be within 0..1"),
    ("creep = 0.3", "rotator.creep = 0.3: unknown key"),
])
def test_rotator_settings_are_checked_naming_the_key(tmp_path: Path, text: str, message: str):
    path = tmp_path / "launcher.toml"
    path.write_text(f"[rotator]\n{text}\n")
    with pytest.raises(ConfigError) as err:
        config.load(path)
    assert str(err.value) == message


def test_rotator_defaults():
    r = config.load().rotator
    assert (r.brake, r.creep_speed) == (0.15, 0.3)


# --- the circuit's rules (hal/circuit.py): outputs that must read low from power-on -------


@pytest.mark.parametrize("key", ["motor_sleep", "deadman", "motor_in1", "motor_in2", "rotator",
                                 "rotator_in2", "amp_enable", "sleep_sense"])
@pytest.mark.parametrize("bcm", [4, 5, 6, 8])
def test_an_output_that_must_stay_low_is_refused_on_a_pin_pulled_up_at_power_on(
        tmp_path: Path, key: str, bcm: int):
    """The old nSLEEP pin (GPIO 6) and dead-man pin (GPIO 4) come up pulled high on every
    Pi: only an external pull-down held the driver asleep while the Pi booted. The nSLEEP
    read-back is joined to nSLEEP, so its power-on pull must be a pull-down too."""
    # The inputs that sit on those pins by default move to GPIO 20 out of the way.
    free = {4: "", 5: "yellow_back = 20\n", 6: "home = 20\n",
            8: "power_contact_sense = 20\n"}[bcm]
    path = tmp_path / "launcher.toml"
    path.write_text(f"[pins]\n{free}{key} = {bcm}\n")
    with pytest.raises(ConfigError) as err:
        config.load(path)
    message = str(err.value)
    assert message.startswith(f"pins.{key} = {bcm}: GPIO {bcm} is pulled up at power-on"), message
    assert "GPIO 9-27" in message


@pytest.mark.parametrize(("key", "bcm"), [("motor_sleep", 11), ("deadman", 10),
                                          ("rotator_in2", 9), ("motor_sleep", 20)])
def test_the_same_outputs_on_pins_pulled_down_at_power_on_are_taken(tmp_path: Path, key: str,
                                                                     bcm: int):
    path = tmp_path / "launcher.toml"
    path.write_text(f"[pins]\n{key} = {bcm}\n")
    assert getattr(config.load(path).pins, key) == bcm


@pytest.mark.parametrize("key", ["lid_closed_nc", "power_contact_sense", "button", "home"])
def test_inputs_may_sit_on_a_pin_pulled_up_at_power_on(tmp_path: Path, key: str):
    """An input's power-on pull moves nothing: the rule is only for outputs."""
    taken = {v: k for k, v in vars(config.load().pins).items() if v is not None}
    path = tmp_path / "launcher.toml"
    clash = taken.get(4)
    path.write_text("[pins]\n" + (f"{clash} = 20\n" if clash and clash != key else "")
                    + f"{key} = 4\n")
    assert getattr(config.load(path).pins, key) == 4


def test_the_read_back_pins_are_optional_and_checked_like_any_pin(tmp_path: Path):
    path = tmp_path / "launcher.toml"
    for key in ("power_contact_sense", "sleep_sense"):
        path.write_text(f"[pins]\n{key} = -1\n")
        assert getattr(config.load(path).pins, key) is None
        path.write_text(f"[pins]\n{key} = 22\n")
        with pytest.raises(ConfigError, match=r"pins\.\w+ = 22: already used by pins\."):
            config.load(path)


def test_safe_stop_reads_pins_the_rules_refuse(tmp_path: Path):
    """safe-stop must drive low whatever pins a unit was wired to (an old unit's nSLEEP on
    GPIO 6, say): the circuit's rules are skipped for it."""
    path = tmp_path / "launcher.toml"
    path.write_text("[pins]\nmotor_sleep = 6\nhome = 25\nsleep_sense = -1\n")  # as wired before
    with pytest.raises(ConfigError):
        config.load(path)
    assert config.load(path, circuit_rules=False).pins.motor_sleep == 6
