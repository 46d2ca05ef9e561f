"""Fakes of the C libraries' Python modules (``lgpio``, ``pigpio``) for gpiozero's real pin
factories; loaded fresh for each test by ``tests/hal/conftest.py``."""
