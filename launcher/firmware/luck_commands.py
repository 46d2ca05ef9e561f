"""The console's press-your-luck commands: `luck show`, `luck set`, `profile` and `seed`.

The luck tables are config keys (``luck.SIDE.*``), so `luck set` changes them through the
running configuration (launcher.firmware.live_config), checked and gated as `config set`
is; a profile that shoots beyond the stock is gated there too. The tables' arithmetic is
launcher.core.luck's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from launcher.core import config, luck
from launcher.core.profiles import parse_profile
from launcher.firmware.registry import (
    E_STATE,
    E_USAGE,
    E_VALUE,
    Args,
    CommandError,
    Registry,
    Reply,
)

if TYPE_CHECKING:
    from launcher.firmware.app import Launcher
    from launcher.firmware.live_config import LiveConfig
    from launcher.firmware.session import Session

LUCK_KEYS = ("hazard", "sizes", "weights")


def register_luck_commands(reg: Registry, app: Launcher, live: LiveConfig,
                           session: Session) -> None:
    """The luck commands, for a console's ``session``; the seed they show and set is the
    running configuration's (``live.seed``), shared by every console."""

    def side_row(side: str) -> dict[str, Any]:
        s = app.machine.settings.luck.side(side)
        return {"side": side, "hazard": list(s.hazard), "sizes": list(s.sizes),
                "weights": list(s.weights), "max_dry": s.max_dry,
                "shot_rate": round(luck.shot_rate(s), 4), "mean_shot": round(luck.mean_shot(s), 3)}

    def luck_show(a: Args) -> Reply:
        mem = app.machine.memory
        now = live.seed if live.seed is not None else app.machine.settings.luck.seed
        return Reply({"side": mem.side, "dry_streak": mem.dry_streak, "seed": now},
                     [side_row(side) for side in config.SIDES], "sides")

    def luck_set(a: Args) -> dict[str, Any]:
        side = a.choice(0, "SIDE", config.SIDES)
        # KEY VALUE pairs; a value runs until the next key word, so `[0.2, 1.0]` may hold spaces.
        pairs: list[tuple[str, str]] = []
        i = 1
        while i < len(a):
            key = a.choice(i, "KEY", LUCK_KEYS)
            j = i + 1
            while j < len(a) and a.word(j) not in LUCK_KEYS:
                j += 1
            if j == i + 1:
                raise CommandError(E_USAGE, f"{key} needs a value; expected: {a.spec.usage}")
            pairs.append((key, a.rest(i + 1, j)))
            i = j
        live.apply({f"luck.{side}.{key}": config.parse_value(text) for key, text in pairs},
                   session)
        row = side_row(side)
        row.update(applied="now", unsaved=len(live.unsaved))
        return row

    def profile(a: Args) -> dict[str, Any]:
        machine = app.machine
        if not a.words:
            return {"profile": machine.profile.name}
        try:
            chosen = parse_profile(a.rest(0))
        except ValueError as exc:
            raise CommandError(E_VALUE, str(exc)) from None
        live.gate_profile(chosen, f"profile {chosen.name}", session)
        if not app.use_profile(chosen):
            raise CommandError(E_STATE, f"refused while {machine.state}; ask again when ready")
        return {"profile": chosen.name}

    def reseed(a: Args) -> dict[str, Any]:
        n = a.integer(0, "N", 0)
        app.set_seed(n)
        live.seed = n
        return {"seed": n}

    reg.register("luck show", "", "both sides' hazard curves and shot sizes", luck_show)
    reg.register("luck set", "SIDE KEY VALUE [KEY VALUE]...",
                 "change a side's hazard, sizes or weights (checked as the config file is)",
                 luck_set, min_args=3, max_args=None)
    reg.register("profile", "[NAME]", "what a press does: flip-attack, dealer, uno-flip, gin or "
                 "deal N (no NAME: show it)", profile, max_args=2)
    reg.register("seed", "N", "reseed the press-your-luck generator (replays a run)", reseed,
                 min_args=1, max_args=1)
