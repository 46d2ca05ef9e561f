"""Open firmware for the motorised Card Launcher of UNO Flip Attack."""

__version__ = "0.1.0"
