"""Pairing a web client with the launcher's own button, as a Hue bridge's link button.

``Pairing.open`` (the web's ``POST /api/pair``) opens a window of ``WINDOW`` seconds and
gives its id. While it is pending the LED shows it (the machine's ``pairing`` event: the
machine decides the LED, as for everything else) and the launcher's button is held back: a
hold of ``HOLD`` seconds confirms the window and is no press; let go sooner, it closes the
window and reaches the machine as the press it was, so a player's press never pairs a
stranger. The serial console's `web pair ID` confirms too (the console is physically
attached). A confirmed window gives its client a token once (``take``). Windows are
rate-limited (``RATE`` a minute) and one is open at a time. Everything runs on the reactor
thread, on reactor time; the ids come from ``secrets`` (they are what a client polls with).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from launcher.core.reactor import NEVER, Reactor
from launcher.firmware.registry import E_STATE, E_UNAVAILABLE, Args, CommandError, Registry

WINDOW = 30.0  # s a window stays open; a confirmed one may be taken as long again
HOLD = 3.0  # s the button is held to confirm
RATE = 3  # windows opened ...
RATE_PERIOD = 60.0  # ... within this many seconds, at most
KEEP = 16  # windows remembered once closed, so that their clients hear why

Note = Callable[[str, dict[str, Any]], None]


@dataclass(slots=True)
class Window:
    """One window: ``state`` pending, confirmed, expired (closed unconfirmed: timed out,
    cancelled by a short press, replaced by a newer one) or taken; ``until`` the end of the
    state (pending: the window's; confirmed: the last moment its token may be taken)."""

    state: str
    until: float


class Pairing:
    """The pairing windows and the button's hold (``app.pairing``)."""

    WINDOW = WINDOW
    HOLD = HOLD

    def __init__(self, reactor: Reactor, show: Callable[[bool], None], note: Note) -> None:
        """``show(on)``: tell the machine a window is open (its LED says so); ``note``: the
        launcher's events (``pair_open``, ``pair_confirmed``, ``pair_closed``)."""
        self.reactor = reactor
        self._show = show
        self._note = note
        self._windows: OrderedDict[str, Window] = OrderedDict()
        self._pending: str | None = None  # the id of the open window
        self._opened: deque[float] = deque()  # when each of the last windows opened
        self._held_at: float | None = None  # the press held back, while it is held
        self.stopped = False  # the unit stopped (`reboot-safe`): no window opens any more
        self._window_timer = reactor.register_timer(self._window_due, NEVER, "pairing.window")
        self._hold_timer = reactor.register_timer(self._hold_due, NEVER, "pairing.hold")

    # -- the web's side --

    def open(self) -> str:
        """A new window's id; one still pending closes (``replaced``). ``CommandError``:
        ``state`` when ``RATE`` windows opened in the last ``RATE_PERIOD`` seconds,
        ``unavailable`` once the unit has stopped."""
        if self.stopped:
            raise CommandError(E_UNAVAILABLE, "the launcher is stopped for a restart")
        now = self.reactor.monotonic()
        while self._opened and self._opened[0] <= now - RATE_PERIOD:
            self._opened.popleft()
        if len(self._opened) >= RATE:
            wait = self._opened[0] + RATE_PERIOD - now
            raise CommandError(E_STATE, f"at most {RATE} pairing windows in {RATE_PERIOD:g} s; "
                                        f"the next in {wait:.0f} s")
        # Here, not at the top: the service loads secrets (4 ms of its start, OpenSSL's
        # hashlib) only when the web panel asks for a window.
        import secrets

        self._close("replaced")
        self._opened.append(now)
        pid = secrets.token_urlsafe(16)
        self._windows[pid] = Window("pending", now + WINDOW)
        while len(self._windows) > KEEP:
            self._windows.popitem(last=False)
        self._pending = pid
        self.reactor.update_timer(self._window_timer, now + WINDOW)
        self._show(True)
        self._note("pair_open", {"expires_s": WINDOW})  # never the id: events are seen widely
        return pid

    def state(self, pid: str) -> str:
        """``pending``, ``confirmed``, ``expired``, ``taken`` or ``unknown``."""
        w = self._windows.get(pid)
        if w is None:
            return "unknown"
        if w.state == "confirmed" and self.reactor.monotonic() > w.until:
            w.state = "expired"  # confirmed, but its client never came for the token
        return w.state

    def confirm(self, pid: str, by: str = "console") -> None:
        """Confirm the pending window ``pid`` (the console's `web pair ID`)."""
        state = self.state(pid)
        if state != "pending":
            raise CommandError(E_STATE, f"no pending pairing window with that id ({state})")
        self._confirm(by)

    def take(self, pid: str) -> bool:
        """True once for a confirmed window (it is then ``taken``); False otherwise."""
        if self.state(pid) != "confirmed":
            return False
        self._windows[pid].state = "taken"
        return True

    def shown(self) -> dict[str, Any]:
        """The open window for a person (`web pairing`): never its id."""
        if self._pending is None:
            return {"window": "none"}
        w = self._windows[self._pending]
        return {"window": "pending", "expires_in": round(w.until - self.reactor.monotonic(), 1),
                "held": self._held_at is not None}

    # -- the button's side --

    def button(self, pressed: bool, now: float) -> bool:
        """The launcher's button went down (``pressed``) or up, debounced, at ``now``: True
        when a press goes to the machine now.

        A press while a window is pending is held back: held for ``HOLD`` it confirms the
        window and is no press; let go sooner, the window closes and the press goes to the
        machine at the release. Once held back, only its length decides: a hold whose
        window closed meanwhile is still no press. A release is never a press of its own.
        """
        if pressed:
            if self._pending is None:
                return True
            self._held_at = now
            self.reactor.update_timer(self._hold_timer, now + HOLD)
            return False
        held, self._held_at = self._held_at, None
        if held is None:
            return False
        self.reactor.update_timer(self._hold_timer, NEVER)
        if now - held >= HOLD:  # let go as its hold fell due: a hold
            if self._pending is not None:
                self._confirm("button")
            return False
        self._close("pressed")
        return True

    def _hold_due(self, eventtime: float) -> float:
        self._held_at = None  # the hold is spent: its release is no press
        if self._pending is not None:
            self._confirm("button")
        return NEVER

    # -- windows --

    def _window_due(self, eventtime: float) -> float:
        self._close("expired")
        return NEVER

    def _confirm(self, by: str) -> None:
        assert self._pending is not None
        w = self._windows[self._pending]
        w.state, w.until = "confirmed", self.reactor.monotonic() + WINDOW
        self._ended()
        self._note("pair_confirmed", {"by": by})

    def _close(self, reason: str) -> None:
        """The pending window, if any, ends unconfirmed (``expired`` to its client)."""
        if self._pending is None:
            return
        self._windows[self._pending].state = "expired"
        self._ended()
        self._note("pair_closed", {"reason": reason})

    def _ended(self) -> None:
        self._pending = None
        self.reactor.update_timer(self._window_timer, NEVER)
        self._show(False)

    def stop(self) -> None:
        """The unit stops: every window closed, the timers off, the machine not told."""
        self.stopped = True
        if self._pending is not None:
            self._windows[self._pending].state = "expired"
            self._pending = None
        self._held_at = None
        for t in (self._window_timer, self._hold_timer):
            self.reactor.update_timer(t, NEVER)


def register_pairing_commands(reg: Registry, pairing: Pairing) -> None:
    """`web pair ID` and `web pairing`."""

    def pair(a: Args) -> dict[str, Any]:
        pairing.confirm(a.word(0))
        return {"paired": "confirmed"}

    def shown(a: Args) -> dict[str, Any]:
        return pairing.shown()

    reg.register("web pair", "ID", "confirm a web client's pending pairing window (the id "
                 "its page shows)", pair, min_args=1, max_args=1)
    reg.register("web pairing", "", "whether a web pairing window is open, and for how long",
                 shown)
