"""``hal.pins.reserved_pins``: the pins the launcher's buses take, and why."""

from __future__ import annotations

from hal.pins import reserved_pins


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
