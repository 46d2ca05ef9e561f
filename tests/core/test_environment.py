"""The suite runs the same whatever the user exported (tests/conftest.py clears it).

Run with ``GPIOZERO_PIN_FACTORY=mock`` (or ``PIGPIO_ADDR``, ``NOTIFY_SOCKET``...) exported:
without the autouse ``clean_environment`` fixture these fail.
"""

from __future__ import annotations

import os

NAMES = ("PIGPIO_ADDR", "PIGPIO_PORT", "LG_WD", "NOTIFY_SOCKET", "WATCHDOG_USEC")
PREFIXES = ("GPIOZERO_", "LAUNCHER_")


def test_no_pin_factory_pigpio_lgpio_systemd_or_launcher_variable_reaches_a_test():
    seen = sorted(k for k in os.environ if k in NAMES or k.startswith(PREFIXES))
    assert seen == []


def test_a_variable_a_test_sets_is_gone_for_the_next(monkeypatch):
    # Tests set what they need through monkeypatch; nothing leaks from one to the next.
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    assert os.environ["GPIOZERO_PIN_FACTORY"] == "mock"
