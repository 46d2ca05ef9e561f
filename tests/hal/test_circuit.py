"""The circuit's description (hal/circuit.py) is whole, and what is made from it agrees with
it: the default config's pins, the installer's boot line, the BOM, the power contact's rating."""

from __future__ import annotations

import re
import subprocess
import tomllib
from dataclasses import fields, replace
from pathlib import Path

import pytest
from gpiozero import pi_info

from hal import circuit as c
from hal import circuit_docs as docs
from hal.base import Pins
from hal.pins import reserved_pins

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TOML = tomllib.loads((ROOT / "launcher" / "default.toml").read_text(encoding="utf-8"))
BUILDS = [c.Build(), c.Build(rotator="mosfet"), c.Build(driver="TB6612FNG")]
UNITS = [c.default_pins(), c.wired_pins(),
         replace(c.wired_pins(), exit_beam=None, lid_closed_nc=None, power_contact_sense=None,
                 sleep_sense=None)]


def test_every_pin_of_hal_base_has_a_role_and_nothing_else_does():
    assert [r.key for r in c.PIN_ROLES] != [] and {r.key for r in c.PIN_ROLES} == {
        f.name for f in fields(Pins)}
    assert len(c.PIN_ROLES) == len(fields(Pins))
    for role in c.PIN_ROLES:
        assert (role.default is None) == (role.key in Pins.OPTIONAL and role.default is None)
        if role.default is None:
            assert role.key in Pins.OPTIONAL, f"{role.key} is off by default but required"


def test_the_default_config_says_what_the_circuit_says():
    pins = DEFAULT_TOML["pins"]
    assert pins == {r.key: -1 if r.default is None else r.default for r in c.PIN_ROLES}


def test_the_default_and_the_suggested_pins_keep_the_circuits_rules():
    taken = reserved_pins(i2s=True, uart=True, i2s_input=True)
    for pins in (c.default_pins(), c.wired_pins()):
        assert c.pin_problems(pins) == []
        numbers = [v for v in vars(pins).values() if v is not None]
        assert len(numbers) == len(set(numbers)), "a GPIO used twice"
        assert not set(numbers) & set(taken), "a pin on a bus the launcher uses"


@pytest.mark.parametrize("key", [*c.BOOT_LOW, "sleep_sense"])
def test_a_must_stay_low_output_is_refused_on_every_pin_pulled_up_at_power_on(key):
    for bcm in range(28):
        problems = dict(c.pin_problems(replace(c.wired_pins(), **{key: bcm})))
        assert (key in problems) == (bcm <= 8), (key, bcm)


def test_the_power_on_pulls_are_the_socs():
    """BCM2835 ARM Peripherals §6.2: GPIO 0-8 pulled high, 9-27 low (also a Pi 5's RP1)."""
    assert [c.power_on_pull(n) for n in range(28)] == ["up"] * 9 + ["down"] * 19


def test_the_header_pins_are_where_gpiozero_puts_each_gpio():
    header = {info.name: n for n, info in pi_info("c03114").headers["J8"].pins.items()
              if info.name.startswith("GPIO")}
    assert {f"GPIO{bcm}": pin for bcm, pin in c.HEADER_PINS.items()} == header


@pytest.mark.parametrize("build", BUILDS, ids=lambda b: f"{b.driver}-{b.rotator}")
@pytest.mark.parametrize("pins", UNITS, ids=["default", "wired", "bare"])
def test_every_terminal_is_on_one_net_and_every_pin_of_a_part_is_wired(pins, build):
    unit = c.circuit(pins, build)
    seen: dict[str, str] = {}
    for net in unit.nets.values():
        assert net.terminals, net.name
        for t in net.terminals:
            ref, pin = t.split(".", 1)
            assert ref in unit.parts and pin in unit.parts[ref].pins, t
            assert t not in seen, f"{t} on {seen.get(t)} and {net.name}"
            seen[t] = net.name
    for part in unit.parts.values():
        if part.ref == "PI":
            continue  # a GPIO of the header may well be unused
        for pin in part.pins:
            assert f"{part.ref}.{pin}" in seen, f"{part.ref}.{pin} is on no net"
    # Each GPIO of a configured pin is on the net named by its key.
    for key, bcm in vars(pins).items():
        if bcm is not None:
            assert unit.gpio_net(bcm) == key, key


def test_every_part_kind_has_its_failure_modes_and_every_part_a_bom_line():
    keys = {line.key for line in docs.BOM}
    for build in BUILDS:
        unit = c.circuit(c.wired_pins(), build)
        for part in unit.parts.values():
            assert part.kind in c.FAILURE_MODES, part.ref
            assert part.bom in keys, f"{part.ref}: BOM line {part.bom!r}"


def test_the_bom_counts_come_from_the_circuit():
    qty = docs.bom_quantities()
    unit = c.circuit(c.wired_pins())
    assert qty["r2k2"] == sum(p.bom == "r2k2" for p in unit.parts.values()) == 4
    assert qty["power_contact"] == 2  # the roller's lead and the rotator's
    # Each power contact's read-back: a bias and a gate resistor (the rotator's bias only on
    # the driver's channel), a 1 MΩ gate pull-down and a MOSFET.
    assert qty["sensing"] == 2 and qty["hall"] == 2 and qty["r100k"] == 4 and qty["r1m"] == 2
    assert qty["mosfet"] == 3  # the two read-backs', and option B's rotator switch
    for line in docs.BOM:
        assert qty.get(line.key, 0) >= 1, f"BOM line {line.key} counts no part"


def test_the_power_contact_is_rated_above_the_worst_stall_it_can_carry():
    """The roller's lowest winding on the freshest pack the docs allow, through the driver:
    under the contact's published resistive rating and its inrush limit, but above its
    motor-load rating, as hardware/power.md says (a stall broken by the contact is a
    motor load's break)."""
    r = c.POWER_CONTACT
    worst = c.roller_stall_worst()
    assert worst == pytest.approx(max(
        c.stall_current(fresh, c.ROLLER_WINDING[0]) for _, fresh in c.VM_PACKS.values()))
    assert max(fresh for _, fresh in c.VM_PACKS.values()) <= r.volts
    assert worst < r.resistive and worst < r.inrush_no
    assert worst > r.motor_no  # power.md: "The roller's stall is above ... motor-load rating"
    power = (ROOT / "hardware" / "power.md").read_text(encoding="utf-8")
    assert "The roller's stall is above the contact's motor-load rating" in power
    assert "DC-rated 5 A" not in power
    # A 3 A bench limit clips the very stall the bring-up asks for: it is 5 A now.
    assert c.stall_current(c.VM_FRESH, c.ROLLER_WINDING[0]) > 3.0
    bring = (ROOT / "hardware" / "bring-up.md").read_text(encoding="utf-8")
    assert "with the limit at 5 A" in bring and "limit at 3 A" not in bring


def test_the_stall_current_is_the_supply_over_the_path():
    assert c.stall_current(4.8, 1.6) == pytest.approx(4.8 / (1.6 + 0.36 + 0.015))
    assert c.stall_current(4.8, 1.6, through_driver=False) == pytest.approx(4.8 / 1.615)


def test_the_boot_line_names_every_must_stay_low_output_of_the_pins():
    assert c.boot_gpio_line(c.default_pins()) == "gpio=11,12,13,16,24=op,dl"
    assert c.boot_gpio_line(c.wired_pins()) == "gpio=9,10,11,12,13,16,24=op,dl"


# --- install.sh writes the same line -------------------------------------------------------

def _fake_pi(root: Path, config: str | None) -> Path:
    (root / "proc/device-tree").mkdir(parents=True)
    (root / "proc/device-tree/model").write_bytes(b"Raspberry Pi 4 Model B Rev 1.5\x00")
    (root / "etc").mkdir()
    (root / "etc/os-release").write_text("VERSION_CODENAME=bookworm\n")
    (root / "boot/firmware").mkdir(parents=True)
    (root / "boot/firmware/config.txt").write_text("# stock\n")
    (root / "boot/firmware/cmdline.txt").write_text("console=tty1\n")
    if config is not None:
        (root / "etc/launcher").mkdir()
        (root / "etc/launcher/launcher.toml").write_text(config)
    return root


def _planned_gpio_line(root: Path) -> list[str]:
    out = subprocess.run(["bash", str(ROOT / "systemd/install.sh"), "--dry-run", "--root",
                          str(root)], capture_output=True, text=True, check=True).stdout
    return re.findall(r"^gpio=.*$", out, re.M)


@pytest.mark.parametrize("text", [None, "[pins]\nmotor_sleep = 20\ndeadman = 10\n"
                                        "rotator_in2 = 9  # BIN2\n[rotator]\nbrake_ms = 150\n"])
def test_install_sh_writes_the_circuits_boot_line_for_the_config(tmp_path, text):
    from launcher.core import config

    root = _fake_pi(tmp_path / "root", text)
    pins = config.load(None if text is None else root / "etc/launcher/launcher.toml").pins
    assert _planned_gpio_line(root) == [c.boot_gpio_line(pins)]


def test_install_sh_knows_the_same_must_stay_low_keys():
    script = (ROOT / "systemd/install.sh").read_text(encoding="utf-8")
    found = re.search(r'^BOOT_LOW_KEYS="([^"]+)"', script, re.M)
    assert found and sorted(found.group(1).split()) == sorted(c.BOOT_LOW)
