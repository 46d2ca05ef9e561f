"""BCM pins the Raspberry Pi's own functions hold, and why, so a config cannot take them."""

from __future__ import annotations

# The ID EEPROM bus (ID_SD, ID_SC) is read by the firmware at boot to identify HATs; the
# Raspberry Pi HAT specification reserves it, whatever else is enabled.
ID_EEPROM: dict[int, str] = {
    0: "the HAT ID EEPROM bus (ID_SD) on every Pi",
    1: "the HAT ID EEPROM bus (ID_SC) on every Pi",
}
# The I2S amplifier (MAX98357A): bit clock, frame clock and data out. GPIO 20 is I2S data
# *in*, which only a microphone would use, so it stays free.
I2S: dict[int, str] = {
    18: "the I2S bit clock of the amplifier (PCM_CLK)",
    19: "the I2S frame clock of the amplifier (PCM_FS)",
    21: "the I2S data to the amplifier (PCM_DOUT)",
}
UART: dict[int, str] = {
    14: "the UART console's TX (TXD0)",
    15: "the UART console's RX (RXD0)",
}


def reserved_pins(i2s: bool, uart: bool) -> dict[int, str]:
    """BCM pin -> why it is taken, given whether I2S audio and the UART console are on."""
    out = dict(ID_EEPROM)
    if i2s:
        out.update(I2S)
    if uart:
        out.update(UART)
    return out
