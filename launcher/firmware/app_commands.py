"""The console's commands on the launcher (launcher.firmware.app's ``Launcher``).

What a person at the unit does (`press`, `load`, `sleep`, `wake`, `clear`), what they read
off it (`side`, `pins`, `inventory`, `stats`, `log`), and the debug runs (`motor run`,
`rotate`), which are requests to the state machine: it owns the motor and the rotator,
and every motor command passes the actuators' lid interlock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from launcher.core import machine as m
from launcher.firmware.registry import (
    E_STATE,
    E_UNAVAILABLE,
    Args,
    CommandError,
    Registry,
    Reply,
    text_fields,
)

if TYPE_CHECKING:
    from launcher.firmware.app import Launcher

MOTOR_RUN_MAX_MS = 300  # the cap of `motor run`
LOAD_MAX = 200
LOG_DEFAULT = 10
LOG_MAX = 200


class Cartridge(Protocol):
    """What `inventory` reads of a simulated board: the cards in its cartridge and those
    lying in front of it (launcher.firmware.sim_commands has the rest of it)."""

    cartridge: list[Any]
    in_tray: int


def register_app_commands(reg: Registry, app: Launcher, sim: Cartridge | None,
                          console_counters: Mapping[str, int]) -> None:
    """The launcher's commands; ``sim`` adds the simulated cartridge to `inventory`, and
    `stats` shows ``console_counters`` with the launcher's own."""

    def press(a: Args) -> dict[str, Any]:
        app.press()
        return {"state": app.machine.state}

    def side(a: Args) -> dict[str, Any]:
        b = app.board
        return {"side": app.machine.memory.side,
                "sensor": "mild" if b.yellow_back.is_active else "wild",
                "home": b.home.is_active}

    def pins(a: Args) -> dict[str, Any]:
        # Every pin of [pins] that is wired, by its config name (new optional pins appear
        # by themselves), in the board's order: outputs, then inputs. Read, never driven.
        wired = app.board.pins
        if wired is None:
            raise CommandError(E_UNAVAILABLE, "this board was not built from [pins]")
        names = {getattr(wired, f.name): f.name for f in dataclasses.fields(wired)
                 if getattr(wired, f.name) is not None}
        levels = app.board.levels()
        out = {names[n]: level for n, level in levels.items() if n in names}
        out.update((name, None) for name in names.values() if name not in out)  # no part
        return out

    def load(a: Args) -> dict[str, Any]:
        n = a.integer(0, "N", 0, LOAD_MAX)
        app.load(n)
        return {"inventory": n}

    def inventory(a: Args) -> dict[str, Any]:
        mem = app.machine.memory
        out: dict[str, Any] = {
            "inventory": "unknown" if mem.inventory is None else mem.inventory,
            "cards_shot": mem.counters.get("cards_shot", 0),
        }
        if sim is not None:
            out["cartridge"] = len(sim.cartridge)
            out["tray"] = sim.in_tray
        return out

    def stats(a: Args) -> dict[str, Any]:
        counters = dict.fromkeys(("presses", "dry", "shots", "cards_shot", "flips", "faults",
                                  "sleeps", "mashed"), 0)
        counters.update(sorted(app.machine.memory.counters.items()))
        counters.update({f"console_{k}": v for k, v in console_counters.items()})
        store = app.store
        # Saves of the state file: a failed one is kept and written at the next save.
        counters.update(state_writes=store.writes, state_failed_writes=store.failed_writes,
                        state_unwritten=store.unwritten)
        if store.last_error is not None:
            counters["state_error"] = store.last_error
        return counters

    def log(a: Args) -> Reply:
        n = a.integer(0, "N", 1, LOG_MAX) if len(a) else LOG_DEFAULT
        history = list(app.history)[-n:]
        rows = [{"t": round(t, 3), "event": kind, "data": dict(data)} for t, kind, data in history]

        def line(r: dict[str, Any]) -> str:
            return f"{r['t']:.3f} {r['event']} {text_fields(r['data'])}".rstrip()

        return Reply({"events": len(rows)}, rows, "events", line)

    def sleep(a: Args) -> dict[str, Any]:
        before = app.machine.state
        if before == m.ASLEEP:
            raise CommandError(E_STATE, "already asleep")
        app.sleep()
        if app.machine.state != m.ASLEEP:
            raise CommandError(E_STATE, f"cannot sleep while {before}")
        return {"state": m.ASLEEP}

    def wake(a: Args) -> dict[str, Any]:
        before = app.machine.state
        if before != m.ASLEEP:
            raise CommandError(E_STATE, f"not asleep ({before})")
        app.wake()
        return {"state": app.machine.state}

    def clear(a: Args) -> dict[str, Any]:
        fault = app.machine.memory.fault
        if app.machine.state is m.LATCHED:
            latched = list(app.machine.memory.latched)
            app.clear_fault()  # refused (it runs nSLEEP's start test again, where latched)
            raise CommandError(E_STATE, m.clear_refusal(latched))
        if app.machine.state != m.FAULT:
            raise CommandError(E_STATE, f"no fault to clear ({app.machine.state})")
        app.clear_fault()
        return {"cleared": fault, "state": app.machine.state}

    def motor_run(a: Args) -> dict[str, Any]:
        ms = a.integer(0, "MS", 1, MOTOR_RUN_MAX_MS)
        if app.machine.state is m.READY and app.debug_run(ms):
            return {"motor": "on", "ms": ms, "speed": app.machine.settings.motor.speed}
        state = app.machine.state
        if state is m.LID_OPEN or not app.actuators.lid_closed:
            raise CommandError(E_STATE, "refused: the lid is not closed")
        if state in (m.DEBUG_RUN, m.DEBUG_DRAIN):
            raise CommandError(E_STATE, "a debug motor run is going on")
        raise CommandError(E_STATE, f"refused while {state}")

    def rotate(a: Args) -> dict[str, Any]:
        # The rotator turns only with the lid fully open (fingers), as in a flip.
        if not app.actuators.lid_full:
            raise CommandError(E_STATE, "refused: the rotator turns only with the lid fully open")
        if app.machine.state is not m.LID_OPEN or not app.debug_rotate():
            raise CommandError(E_STATE, f"refused while {app.machine.state}")
        return {"rotator": "on", "limit": app.machine.settings.timing.rotation_timeout}

    r = reg.register
    r("press", "", "press the button once (as the real button does)", press)
    r("side", "", "the side in play, and what the cartridge sensor says", side)
    r("pins", "", "every configured pin's level: outputs (PWM as its duty), inputs raw "
      "(1 high, 0 low)", pins)
    r("load", "N", "tell the launcher it now holds N cards", load, min_args=1, max_args=1)
    r("inventory", "", "cards left and cards shot", inventory)
    r("stats", "", "the launcher's counters and the console's", stats)
    r("log", "[N]", f"the last N events (default {LOG_DEFAULT}, at most {LOG_MAX})", log,
      max_args=1)
    r("sleep", "", "go to sleep now", sleep)
    r("wake", "", "wake up now", wake)
    r("clear", "", "leave a fault", clear)
    r("motor run", "MS", f"run the shooter motor MS ms (at most {MOTOR_RUN_MAX_MS})", motor_run,
      min_args=1, max_args=1, debug=True)
    r("rotate", "", "turn the cartridge to its next detent (a flip; the lid fully open)",
      rotate, debug=True)
