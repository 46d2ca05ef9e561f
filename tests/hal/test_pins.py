"""``hal.pins``: the pins the launcher's buses take and why, the pin factory "auto" picks,
and the header's gpiochip found by its label."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hal.pins import (
    auto_factory_name,
    factory_name,
    gpiochip_labels,
    header_gpiochip,
    reserved_pins,
)


def test_the_id_eeprom_pins_are_always_reserved():
    assert reserved_pins(i2s=False, uart=False).keys() == {0, 1}


def test_i2s_and_uart_add_their_pins_with_a_reason_each():
    taken = reserved_pins(i2s=True, uart=True)
    assert list(taken) == [0, 1, 14, 15, 18, 19, 21]  # sorted by pin
    assert "I2S" in taken[18] and "UART" in taken[14] and "EEPROM" in taken[0]
    assert 20 not in taken  # the MAX98357A has no capture line
    assert 20 in reserved_pins(i2s=True, uart=False, i2s_input=True)


def test_the_default_pins_avoid_every_reserved_pin():
    from launcher.core import config

    pins = {p for p in vars(config.load().pins).values() if p is not None}
    assert not pins & reserved_pins(i2s=True, uart=True, i2s_input=True).keys()


# -- the header's gpiochip, by label --------------------------------------------------------

# (chip number, legacy sysfs base, label, controller folder under /sys/devices), as
# `gpiodetect` lists them on each board (raspberrypi/linux#6144, WiringPi/WiringPi#280).
PI4 = [(0, 512, "pinctrl-bcm2711", "platform/soc/fe200000.gpio"),
       (1, 570, "raspberrypi-exp-gpio", "platform/soc/soc:firmware/soc:firmware:gpio")]
ZERO_2_W = [(0, 512, "pinctrl-bcm2835", "platform/soc/3f200000.gpio")]
PI5_OLD_FIRMWARE = [(0, 512, "gpio-brcmstb@107d508500", "platform/soc/107d508500.gpio"),
                    (1, 544, "gpio-brcmstb@107d508520", "platform/soc/107d508520.gpio"),
                    (2, 548, "gpio-brcmstb@107d517c00", "platform/soc/107d517c00.gpio"),
                    (3, 565, "gpio-brcmstb@107d517c20", "platform/soc/107d517c20.gpio"),
                    (4, 571, "pinctrl-rp1", "platform/axi/1000120000.pcie/1f000d0000.gpio")]
PI5_NEW_FIRMWARE = [(0, 571, "pinctrl-rp1", "platform/axi/1000120000.pcie/1f000d0000.gpio"),
                    (10, 512, "gpio-brcmstb@107d508500", "platform/soc/107d508500.gpio"),
                    (11, 544, "gpio-brcmstb@107d508520", "platform/soc/107d508520.gpio"),
                    (12, 548, "gpio-brcmstb@107d517c00", "platform/soc/107d517c00.gpio"),
                    (13, 565, "gpio-brcmstb@107d517c20", "platform/soc/107d517c20.gpio")]


def sysfs(root: Path, chips: list[tuple[int, int, str, str]]) -> Path:
    """The kernel's sysfs layout for these chips under ``root``, with relative links as in
    the real /sys: /sys/bus/gpio/devices/gpiochipN -> the chip below its controller, and
    the controller's legacy entry gpio/gpiochipBASE/label (also linked from /sys/class/gpio)."""
    bus = root / "sys/bus/gpio/devices"
    bus.mkdir(parents=True, exist_ok=True)
    (root / "sys/class/gpio").mkdir(parents=True, exist_ok=True)
    for number, base, label, controller in chips:
        where = root / "sys/devices" / controller
        (where / f"gpiochip{number}").mkdir(parents=True)
        legacy = where / "gpio" / f"gpiochip{base}"
        legacy.mkdir(parents=True)
        (legacy / "label").write_text(label + "\n")
        (bus / f"gpiochip{number}").symlink_to(
            os.path.relpath(where / f"gpiochip{number}", bus))
        (root / "sys/class/gpio" / f"gpiochip{base}").symlink_to(
            os.path.relpath(legacy, root / "sys/class/gpio"))
    return root


@pytest.mark.parametrize(("chips", "number"), [
    (PI4, 0), (ZERO_2_W, 0), (PI5_OLD_FIRMWARE, 4), (PI5_NEW_FIRMWARE, 0)],
    ids=["pi4", "zero-2-w", "pi5-old-firmware", "pi5-new-firmware"])
def test_the_header_chip_is_found_by_its_label_not_its_number(tmp_path, chips, number):
    root = sysfs(tmp_path, chips)
    assert gpiochip_labels(root) == {n: label for n, _, label, _ in chips}
    assert header_gpiochip(root) == number


def test_no_header_label_leaves_the_choice_to_gpiozero(tmp_path):
    assert header_gpiochip(tmp_path) is None  # no sysfs at all (not Linux, or a container)
    root = sysfs(tmp_path, [(0, 512, "gpio-sim.0-node0", "platform/gpio-sim.0")])
    assert gpiochip_labels(root) == {0: "gpio-sim.0-node0"}
    assert header_gpiochip(root) is None


def test_a_chip_without_a_readable_label_is_skipped(tmp_path):
    root = sysfs(tmp_path, PI4)
    (tmp_path / "sys/devices/platform/soc/fe200000.gpio/gpio/gpiochip512/label").unlink()
    assert gpiochip_labels(root) == {1: "raspberrypi-exp-gpio"}
    assert header_gpiochip(root) is None


@pytest.mark.parametrize("model", ["Raspberry Pi 5 Model B Rev 1.0",
                                   "Raspberry Pi 4 Model B Rev 1.4",
                                   "Raspberry Pi Zero 2 W Rev 1.0",
                                   "Raspberry Pi 3 Model B Rev 1.2"])
def test_auto_is_lgpio_on_every_pi(model):
    assert auto_factory_name({}, model) == "lgpio"
    assert factory_name("auto", model, env={}) == "lgpio"


def test_the_environment_and_the_config_still_choose_pigpio_where_it_reaches():
    pi4 = "Raspberry Pi 4 Model B Rev 1.4"
    assert auto_factory_name({"GPIOZERO_PIN_FACTORY": "pigpio"}, pi4) == "pigpio"
    assert factory_name("pigpio", pi4, env={}) == "pigpio"
    assert auto_factory_name({}, None) == "mock"


def test_make_factory_opens_the_header_chip_it_finds_by_label(monkeypatch, fake_lgpio):
    import hal.gpio

    fake_lgpio.CHIP.number = 4  # a Pi 5 on the old firmware: RP1 is gpiochip4
    monkeypatch.setattr(hal.gpio, "header_gpiochip", lambda: 4)
    factory = hal.gpio.make_factory("lgpio")
    try:
        assert factory.chip == 4
    finally:
        factory.close()
