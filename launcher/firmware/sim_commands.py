"""The console's commands for the simulated launcher: `lid`, `button`, `jam`, `unjam`, `cards`,
`selftest`.

They are registered on every board, so that `help` is the same everywhere, and marked
*sim*: on a real board, where the lid, jams and cards are physical, they answer `error
hardware` (`selftest`: `error unavailable`, saying how to run it there). The simulated
board itself is ``hal.sim.SimLauncher``; the firmware knows it only as the protocol below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from launcher.core.errors import LauncherError
from launcher.firmware.app_commands import LOAD_MAX, Cartridge
from launcher.firmware.registry import (
    E_HARDWARE,
    E_UNAVAILABLE,
    Args,
    CommandError,
    Registry,
    Reply,
)

if TYPE_CHECKING:
    from launcher.core.config import Settings
    from launcher.firmware.app import Launcher
    from launcher.firmware.live_config import LiveConfig


class SimulatedBoard(Cartridge, Protocol):
    """What the console uses of a simulated launcher (``hal.sim.SimLauncher``)."""

    ejected_total: int

    @property
    def lid(self) -> str: ...
    def open_lid(self, full: bool = True) -> None: ...
    def close_lid(self) -> None: ...
    def hold_button(self) -> None: ...
    def release(self) -> None: ...
    def jam(self) -> None: ...
    def clear_jam(self) -> None: ...
    def load(self, cards: Any) -> None: ...


SelfTestRun = Callable[["Settings"], Any]  # settings -> a report with .results and .failed()

# The self-test drives the pins itself, takes the inputs' callbacks and needs a person at
# the launcher for each step: not something to do under the running firmware.
_SELFTEST_ON_A_REAL_BOARD = (
    E_UNAVAILABLE, "on a real board the self-test needs the board to itself and a person at "
                   "it: stop the firmware (sudo systemctl stop launcher) and run `launcher "
                   "selftest`")


def register_sim_commands(reg: Registry, app: Launcher, sim: SimulatedBoard | None,
                          run_selftest: SelfTestRun | None, live: LiveConfig) -> None:
    """The sim-only commands; ``run_selftest`` walks a fresh simulated unit, built on the
    running configuration (``live``), through the self-test."""

    def lid(a: Args) -> dict[str, Any]:
        where = a.choice(0, "the lid position", ("open", "full", "close"))
        assert sim is not None
        if where == "close":
            sim.close_lid()
        else:
            sim.open_lid(full=where == "full")
        return {"lid": sim.lid}

    def button(a: Args) -> dict[str, Any]:
        held = a.choice(0, "the button", ("hold", "release")) == "hold"
        assert sim is not None
        if held:
            sim.hold_button()
        else:
            sim.release()
        return {"button": "held" if held else "released"}

    def selftest(a: Args) -> Reply:
        if run_selftest is None:
            raise CommandError(E_UNAVAILABLE, "no self-test was given to this console")
        try:
            report = run_selftest(live.running())
        except LauncherError as exc:
            raise CommandError(E_UNAVAILABLE, f"selftest cannot start: {exc}") from None
        rows = [{"part": r.part, "status": r.status, "detail": r.detail}
                for r in report.results.values()]

        def line(r: dict[str, Any]) -> str:
            return f"{r['status']:<4} {r['part']}" + (f": {r['detail']}" if r["detail"] else "")

        failed = report.failed()
        return Reply({"parts": len(rows), "passed": len(rows) - len(failed),
                      "failed": len(failed), "on": "a fresh simulated launcher"},
                     rows, "parts", line)

    def jam(a: Args) -> dict[str, Any]:
        assert sim is not None
        sim.jam()
        return {"jam": "armed"}

    def unjam(a: Args) -> dict[str, Any]:
        assert sim is not None
        sim.clear_jam()
        return {"jam": "cleared"}

    def cards(a: Args) -> dict[str, Any]:
        assert sim is not None
        n = a.integer(0, "N", 1, LOAD_MAX)
        start = sim.ejected_total + len(sim.cartridge)  # ejected keeps the newest
        sim.load(f"card{start + i + 1}" for i in range(n))
        return {"cartridge": len(sim.cartridge)}

    r = reg.register
    r("lid", "open|full|close", "move the simulated lid: ajar, fully open, or shut", lid,
      min_args=1, max_args=1, sim=True,
      elsewhere=(E_HARDWARE, "the lid is physical on this board: open or close it by hand"))
    r("button", "hold|release", "hold the simulated button down (a web pairing's hold), or let "
      "it go", button, min_args=1, max_args=1, sim=True,
      elsewhere=(E_HARDWARE, "the button is physical on this board: hold it by hand"))
    r("selftest", "", "the self-test walk-through on a fresh unit", selftest, sim=True,
      elsewhere=_SELFTEST_ON_A_REAL_BOARD)
    r("jam", "", "the next card sticks in the slot", jam, sim=True)
    r("unjam", "", "free the stuck card", unjam, sim=True)
    r("cards", "N", "put N cards into the cartridge", cards, min_args=1, max_args=1, sim=True)
