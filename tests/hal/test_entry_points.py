"""gpiozero imported without importlib.metadata; its look-ups by name still work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _python(code: str, **env: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True, cwd=REPO, env={**os.environ, **env})
    return proc.stdout.strip()


def test_hal_gpio_and_the_simulator_import_gpiozero_without_importlib_metadata() -> None:
    out = _python("import sys, hal.gpio, hal.sim\n"
                  "import gpiozero, gpiozero.pins.mock\n"
                  "print(sorted(m for m in ('importlib.metadata', 'importlib_metadata', 'email')"
                  " if m in sys.modules))")
    assert out == "[]"


def test_a_pin_factory_named_in_the_environment_is_still_found_by_entry_point() -> None:
    # gpiozero's own look-up (Device._default_pin_factory reads GPIOZERO_PIN_FACTORY and asks
    # entry_points for it); the deferred entry_points imports the real one on this call.
    out = _python("import sys, hal.gpio\nfrom gpiozero import Device\n"
                  "factory = Device._default_pin_factory()\n"
                  "print(type(factory).__name__, 'importlib.metadata' in sys.modules)",
                  GPIOZERO_PIN_FACTORY="mock")
    assert out == "MockFactory True"


def test_an_installed_backport_is_left_to_gpiozero(tmp_path: Path) -> None:
    (tmp_path / "importlib_metadata.py").write_text(
        "def entry_points(**params):\n    return 'the backport'\n")
    out = _python("import hal.gpio, gpiozero.devices\n"
                  "print(gpiozero.devices.entry_points(group='x'))",
                  PYTHONPATH=f"{tmp_path}{os.pathsep}{REPO}")
    assert out == "the backport"
