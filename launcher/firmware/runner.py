"""``launcher run``: the firmware on its board, under systemd or by hand."""

from __future__ import annotations

import logging
import random
from pathlib import Path

from launcher.core import config
from launcher.core.reactor import RealReactor
from launcher.firmware.app import build_app
from launcher.firmware.notify import Notifier, Watchdog

log = logging.getLogger("launcher")

RESTART_EXIT = 75  # `reboot-safe`: a clean exit that systemd's Restart=on-failure restarts


def run_firmware(settings: config.Settings, seed: int, config_path: str | None = None,
                 force_mock: bool = False) -> int:
    """Run until SIGTERM/SIGINT (exit 0) or a console restart request (exit 75)."""
    from launcher.cli.main import install_signal_handlers
    from launcher.firmware.console import Console
    from launcher.firmware.transport import SerialTransport

    reactor = RealReactor()
    notifier = Notifier.from_env()
    app, sim = build_app(settings, reactor, random.Random(seed), simulate=force_mock)
    if sim is not None:
        log.warning("no Raspberry Pi found: running on the SIMULATED launcher")
    exit_code = [0]

    def restart() -> None:
        exit_code[0] = RESTART_EXIT
        reactor.stop()

    install_signal_handlers(reactor.stop)
    console = Console(app, sim=sim, raw_config=config.load_raw(config_path),
                      config_path=Path(config_path) if config_path else None,
                      reboot=restart)
    transport = None
    if settings.console.port:
        transport = SerialTransport(console, reactor, settings.console.port,
                                    baud=settings.console.baud)
        transport.start()
    app.start()
    log.info("started on %s, side %s, luck seed %d", app.board.name, app.machine.memory.side,
             seed)
    notifier.ready(f"ready on {app.board.name}, side {app.machine.memory.side}")
    watchdog = Watchdog.from_env(reactor, notifier)
    if watchdog is not None:
        watchdog.start()
    try:
        reactor.run()
    finally:
        notifier.stopping()
        if watchdog is not None:
            watchdog.stop()
        if transport is not None:
            transport.stop()
        app.stop()
        app.board.close()
        notifier.close()
    return exit_code[0]
