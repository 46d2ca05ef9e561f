"""One console session's modes: text or JSON, and `debug on`, which lapses when idle.

A session starts fresh (text mode, debug off) when its transport sees a new client, on
`session new`, and when `debug off` or the lapse ends a debug run (docs/console.md,
"Sessions"). The session's own commands, `json`, `session new` and `debug`, are
registered here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from launcher.core.reactor import NEVER
from launcher.firmware.registry import (
    E_UNAVAILABLE,
    Args,
    CommandError,
    Registry,
    event_line,
    on_off,
)

if TYPE_CHECKING:
    from launcher.firmware.app import Launcher

log = logging.getLogger("launcher.console")


class Session:
    """The modes of the console's one session, and the timer that ends `debug on`."""

    def __init__(self, app: Launcher, emit: Callable[[str], None], *,
                 debug_idle: Callable[[], float], remote: bool = False) -> None:
        """``debug_idle``: how long `debug on` lasts without a line, as the running
        configuration says now (console.debug_idle_s, which `config set` changes live)."""
        self.app = app
        self.debug_idle = debug_idle
        self._emit = emit  # where the session's own event line (debug_off) goes
        # A session over the network (a web panel's): every reply is read as JSON (`json
        # off` is refused, a fresh session starts in JSON mode), and the keys of the
        # network's own access (web.*) are the unit's console's alone (live_config).
        self.remote = remote
        self.json = remote
        self.debug = False
        # `debug on` lapses after console.debug_idle_s without a line: a bare UART cannot
        # tell one person at it from the next.
        self._debug_timer = app.reactor.register_timer(self._debug_idle, NEVER,
                                                       "console.debug_idle")

    def reset(self) -> None:
        """A new session: text mode (JSON for a remote one), debug off (and any debug run
        stopped)."""
        self.json = self.remote
        self.debug_off()

    def close(self) -> None:
        self.app.reactor.unregister_timer(self._debug_timer)

    def debug_off(self) -> None:
        self.debug = False
        self.app.reactor.update_timer(self._debug_timer, NEVER)
        self.app.debug_stop()

    def lasts(self) -> None:
        """A line came: debug mode, if on, lasts console.debug_idle_s from now."""
        if self.debug:
            idle = self.debug_idle()
            self.app.reactor.update_timer(self._debug_timer, self.app.reactor.monotonic() + idle)

    def _debug_idle(self, eventtime: float) -> float:
        if self.debug:
            idle = self.debug_idle()
            log.warning("console: debug mode off after %gs without a line", idle)
            self.debug_off()
            self._emit(self.event_line("debug_off", {"reason": "idle", "idle_s": idle}))
        return NEVER

    def event_line(self, kind: str, data: Mapping[str, Any]) -> str:
        """An asynchronous event as this session shows it."""
        return event_line(kind, data, self.app.reactor.monotonic(), self.json)


def register_session_commands(reg: Registry, session: Session) -> None:
    """`json`, `session new` and `debug`."""

    def json_mode(a: Args) -> dict[str, Any]:
        on = a.choice(0, "json mode", ("on", "off")) == "on"
        if not on and session.remote:
            raise CommandError(E_UNAVAILABLE, "this session reads every reply as JSON "
                                              "(the web panel's): json stays on")
        session.json = on
        return {"json": on_off(session.json)}

    def session_new(a: Args) -> dict[str, Any]:
        session.reset()
        return {"session": "new", "json": on_off(session.json), "debug": "off",
                "debug_idle_s": session.debug_idle()}

    def debug_mode(a: Args) -> dict[str, Any]:
        if a.choice(0, "debug mode", ("on", "off")) == "on":
            session.debug = True
            session.lasts()
        else:
            session.debug_off()
        return {"debug": on_off(session.debug)}

    reg.register("json", "on|off", "one JSON object per line (for tools), or text", json_mode,
                 min_args=1, max_args=1)
    reg.register("session new", "", "a fresh session: text mode, debug off, a debug run ended",
                 session_new)
    reg.register("debug", "on|off", "allow the commands that move hardware directly",
                 debug_mode, min_args=1, max_args=1)
