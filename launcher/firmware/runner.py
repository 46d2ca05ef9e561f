"""``launcher run``: the firmware on its board, under systemd or by hand."""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launcher.core import config
from launcher.core.errors import LauncherError
from launcher.core.reactor import RealReactor
from launcher.firmware.app import Launcher
from launcher.firmware.notify import Notifier, Watchdog

if TYPE_CHECKING:
    from launcher.firmware.console import Console
    from launcher.firmware.transport import Transport

log = logging.getLogger("launcher")

RESTART_EXIT = 75  # `reboot-safe`: a clean exit that systemd's Restart=on-failure restarts


def run_firmware(app: Launcher, seed: int, config_path: str | None = None,
                 serial: config.Console | None = None,
                 console_extras: dict[str, Any] | None = None,
                 open_console: Callable[[Console], Transport] | None = None,
                 on_ready: Callable[[Console], Callable[[], None] | None] | None = None
                 ) -> int:
    """Run ``app`` until SIGTERM/SIGINT (exit 0) or a console restart request (exit 75).

    ``app`` is built on its board by the caller (``launcher.cli``); this owns the loop.
    The console is on ``serial``'s port (the config's ``[console]``; none if it names none)
    unless ``open_console`` makes its transport (a pty for the simulated launcher).
    ``on_ready`` is called with the console once the firmware is up (after READY: what it
    starts, the web panel, costs the start nothing); what it returns, if anything, is
    called first as the firmware stops, so that nothing it started asks the launcher for
    work while it stops; a ``LauncherError`` it raises (what it started did not start) is
    raised once everything is stopped. An exception from ``on_ready`` stops the firmware
    as any end does, and is raised.
    """
    from launcher.firmware.console import Console
    from launcher.firmware.transport import SerialTransport

    reactor = app.reactor
    if not isinstance(reactor, RealReactor):
        raise TypeError("run_firmware needs the launcher on a RealReactor")
    notifier = Notifier.from_env()
    exit_code = [0]

    def restart() -> None:
        exit_code[0] = RESTART_EXIT
        reactor.stop()

    put_back = relay_signals(lambda signum: reactor.stop())
    console = Console(app, **(console_extras or {}), seed=seed,
                      raw_config=config.load_raw(config_path),
                      config_path=Path(config_path) if config_path else None,
                      reboot=restart)
    transport: Transport | None = None
    if open_console is not None:
        transport = open_console(console)
    elif serial is not None and serial.port:
        transport = SerialTransport(console, reactor, serial.port, baud=serial.baud)
    if transport is not None:
        transport.start()
    app.start()
    # The guard thread ends any run or turn whose lease the reactor stops renewing.
    app.actuators.start_guard()
    tune_gc()
    tune_switch_interval()
    log.info("started on %s, side %s, luck seed %d", app.board.name, app.machine.memory.side,
             seed)
    notifier.ready(f"ready on {app.board.name}, side {app.machine.memory.side}")
    watchdog = Watchdog.from_env(reactor, notifier, dead_layers=app.layers_down)
    if watchdog is not None:
        watchdog.start()
    stop_extra: Callable[[], None] | None = None
    failed: LauncherError | None = None
    try:
        if on_ready is not None:
            stop_extra = on_ready(console)
        reactor.run()
    finally:
        notifier.stopping()
        if stop_extra is not None:
            try:
                stop_extra()
            except LauncherError as exc:  # what it started did not start: raised at the end
                failed = exc
            except Exception:  # the launcher is stopped below whatever happened here
                log.exception("stopping what started after READY failed")
        if watchdog is not None:
            watchdog.stop()
        if transport is not None:
            transport.stop()
        app.stop()
        app.board.close()
        notifier.close()
        put_back()
    if failed is not None:
        raise failed
    return exit_code[0]


def tune_gc() -> None:
    """After start: keep the cyclic collector off what start built, for the life of the process.

    Everything built so far (config, pins, sound buffers, the console's command table,
    imported modules) lives until exit, yet each full collection would walk all of it again:
    10-18 ms on the reactor thread, once every few thousand presses. ``gc.freeze()`` moves
    every object to the permanent generation, which no collection visits; later full
    collections walk only what was made since. No collection first: the collector has run
    all through the start, and one more, walking every object, found only a handful of
    unreachable ones (a few hundred objects with what they hold); those few stay, and the
    start is shorter by that walk (``python -m bench.startup``). The thresholds stay
    Python's own: ``python -m bench`` measured no gain from changing them
    (docs/PERFORMANCE.md).
    """
    gc.freeze()


SWITCH_INTERVAL = 0.0002  # s; Python's default is 0.005


def tune_switch_interval() -> None:
    """Let the pin library's thread take the interpreter within half a millisecond.

    The lid interlock runs on that thread (``Actuators.lid_left``), but it needs the GIL. A
    reactor thread stuck in a busy loop hands the GIL over only every switch interval, and
    takes it back one interval later, mid-callback: at Python's 5 ms default the roller
    would run on for 5-10 ms with the lid open. At 0.2 ms the lid-to-roller-off time stays
    under 1 ms (``python -m bench.interlock`` measures it; 0.5 ms gave 1.5 ms at p95). The
    cost is nil while the firmware idles: the interval only matters when two threads want
    to run at once.
    """
    sys.setswitchinterval(SWITCH_INTERVAL)


def relay_signals(on_signal: Callable[[int], None]) -> Callable[[], None]:
    """SIGTERM and SIGINT call ``on_signal(signum)`` on a thread of their own, ``signals``
    (systemd stops the service with SIGTERM); returns what puts the handlers before back.

    A handler runs on the main thread, the reactor's, wherever the signal found it: holding
    the lock of the reactor's queue, say, or of the event its wait sleeps on. A handler that
    took either (``reactor.stop`` posts) waited for itself for ever: a benchmark's
    ``launcher run`` hung so in CI's run of a6d4e45, its SIGTERM come inside
    ``Event.wait``. This handler takes no lock: it writes the signal's number to a pipe,
    and the thread, blocked on the pipe's other end, calls ``on_signal`` as any other
    thread asks the reactor for work. What ``on_signal`` raises is logged, never raised.
    """
    read, write = os.pipe()
    os.set_blocking(write, False)

    def relay() -> None:
        try:
            while got := os.read(read, 64):  # b"": the write end closed (put back)
                for signum in got:
                    try:
                        on_signal(signum)
                    except Exception:  # a bug: the next signal still gets through
                        log.exception("asking the firmware to stop on signal %d", signum)
        finally:
            os.close(read)

    thread = threading.Thread(target=relay, name="signals", daemon=True)
    thread.start()

    def handler(signum: int, frame: object) -> None:
        with contextlib.suppress(OSError):  # the pipe full: stops are on their way already
            os.write(write, bytes([signum]))

    before = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}

    def put_back() -> None:
        for s, old in before.items():
            signal.signal(s, old)
        os.close(write)
        thread.join()  # it ends once it has read what was written before the close

    return put_back
