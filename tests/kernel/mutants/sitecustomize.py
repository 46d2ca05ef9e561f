"""The kernel tier's mutants: one deliberate bug in the firmware, for .ci/kernel/mutants.

On PYTHONPATH only for a mutant's run of the tier, with ``KERNEL_MUTANT`` naming the bug;
it changes the firmware's processes only (``launcher ...`` and the hang harness), never
pytest's. Each mutant replaces one named function as soon as its module is imported, and
a name that is gone fails the process loudly (tests/kernel/patching.py), so a renamed
function cannot make a mutant pass unnoticed. The production code has no hook for any of
this.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

MUTANTS = {
    # The pin thread's lid stop does nothing: only the reactor's path (or the lease) is left.
    "lid_left_noop": ("launcher.firmware.actuators", "Actuators.lid_left",
                      lambda original: lambda self: None),
    # The guard's check ends nothing: a run the reactor stops renewing is never stopped.
    "lease_never_lapses": ("launcher.firmware.actuators", "Actuators.expire",
                           lambda original: lambda self, now: float("inf")),
    # safe-stop drives no pin but says, as ever, that it drove them low.
    "safe_stop_drives_nothing": (
        "launcher.firmware.safestop", "drive_safe",
        lambda original: lambda pins, factory, remembered=None: sys.modules[
            "launcher.firmware.safestop"].targets(pins, remembered)),
    # IN1 (pins.motor_in1) written high as soon as the board is open.
    "in1_high_at_start": ("hal.gpio", "open_board", lambda original: _in1_high(original)),
}


def _in1_high(original):
    def open_board(pins, name):
        board = original(pins, name)
        board.motor.forward(1.0)
        return board
    return open_board


def _firmware_process() -> bool:
    script = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return script in ("launcher", "harness.py")


def _apply(name: str) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    try:
        from patching import replace, when_imported
    finally:
        sys.path.pop(0)
    if name not in MUTANTS:
        raise SystemExit(f"KERNEL_MUTANT={name!r}: no such mutant (known: {', '.join(MUTANTS)})")
    module, qualname, make = MUTANTS[name]

    def patch(loaded: object) -> None:
        replace(module, qualname, make)
        said = f"mutant: {name}: {module}.{qualname} replaced (pid {os.getpid()})"
        print(said, file=sys.stderr, flush=True)
        results = os.environ.get("KERNEL_RESULTS")
        if results:  # for .ci/kernel/mutants: the mutant did reach a firmware process
            with open(os.path.join(results, "mutant-applied"), "a") as applied:
                applied.write(said + "\n")

    when_imported(module, patch)


if os.environ.get("KERNEL_MUTANT") and _firmware_process():
    _apply(os.environ["KERNEL_MUTANT"])
