"""``launcher run``: the firmware on a Pi's board, or (``--simulated``) on the simulated
launcher with its console on a pty, a laptop's stand-in for the Pi's serial port.

Either way :func:`launcher.firmware.runner.run_firmware` runs it: the same guard thread,
watchdog and safe stop. Off a Pi, a bare ``launcher run`` says what to run instead of
writing the Pi's state file and waiting for a /dev/serial0 that will never come. With
``--web`` the phone panel's server starts once the firmware is up (launcher.web).
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launcher.core import config
from launcher.core.errors import LauncherError

if TYPE_CHECKING:
    from launcher.firmware.app import Launcher
    from launcher.firmware.console import Console

log = logging.getLogger("launcher")

NOT_A_PI = ("launcher run: this is not a Raspberry Pi; `launcher run --simulated` runs the "
            "firmware on the simulated launcher with its console on a pty (`launcher play` "
            "drives one from the keyboard)")


def run_unit(args: argparse.Namespace, settings: config.Settings, seed: int) -> int:
    """Run the firmware as ``args`` (``--simulated``, ``--port``) and the config ask."""
    from hal.gpio import factory_name, pi_model
    from launcher.firmware.owner import owning
    from launcher.firmware.places import check_places

    if args.simulated:
        from launcher.cli.paths import simulated_state

        settings = simulated_state(settings, "run-state.json", args.state)
    elif args.state:
        settings = replace(settings, state_path=Path(args.state))
    # The paths and port, before anything is opened or written (the --port of the command
    # line is the operator's own, and may be a pyserial URL).
    check_places(settings)
    if args.port is not None:
        settings = replace(settings, console=replace(settings.console, port=args.port))
    # The one place that decides between a real board and the simulated one.
    name = "sim" if args.simulated else factory_name(settings.pin_factory, pi_model())
    if name == "mock" and not _mock_asked_for(settings):
        print(NOT_A_PI, file=sys.stderr)
        return 2
    # One process on a state file, for as long as it runs (launcher.firmware.owner).
    with owning(settings.state_path):
        return _run_owned(args, settings, seed, name)


def _run_owned(args: argparse.Namespace, settings: config.Settings, seed: int,
               name: str) -> int:
    from launcher.core.reactor import RealReactor

    reactor = RealReactor()
    rng = random.Random(seed)
    web_at = _web_address(args, settings.web)
    if name == "sim":
        return _run_simulated(settings, reactor, rng, seed, args, web_at)
    if name == "mock":
        # A config (or GPIOZERO_PIN_FACTORY) that names the mock pins: its own state path
        # and port, as given (the tests of the service run this way).
        from launcher.firmware.runner import run_firmware
        from launcher.sim.unit import console_extras, simulated_app

        log.warning("pin factory mock: running on the SIMULATED launcher")
        app, sim = simulated_app(settings, reactor, rng, log.warning)
        extras = console_extras(sim)
        return run_firmware(app, seed, config_path=args.config, serial=settings.console,
                            console_extras=extras,
                            on_ready=web_on_ready(app, settings.web, web_at, extras))
    from hal.gpio import open_board
    from launcher.firmware.app import build_app
    from launcher.firmware.runner import run_firmware
    from launcher.firmware.safestop import remember_pins

    app = build_app(settings, reactor, rng, open_board(settings.pins, name))
    # for a safe-stop whose config breaks before the next start
    remember_pins(settings.pin_factory, settings.pins, settings.state_path)
    return run_firmware(app, seed, config_path=args.config, serial=settings.console,
                        on_ready=web_on_ready(app, settings.web, web_at))


def _web_address(args: argparse.Namespace, web: config.Web) -> tuple[str, int] | None:
    """Where the web panel listens: --web, else [web]'s host and port when it is enabled,
    else nowhere."""
    if args.web is not None:
        return args.web
    return (web.host, web.port) if web.enabled else None


def web_on_ready(app: Launcher, web: config.Web, address: tuple[str, int] | None,
                 extras: Mapping[str, Any] | None = None,
                 before: Callable[[], None] | None = None
                 ) -> Callable[[Console], Callable[[], None] | None] | None:
    """What ``run_firmware`` calls once the firmware is up: ``before`` (the pty's lines),
    then the web panel on ``address``, if any, whose address is printed on stdout
    (``web: URL``, its own line); it returns the web's stop. None if there is neither."""
    if address is None and before is None:
        return None

    def ready(console: Console) -> Callable[[], None] | None:
        if before is not None:
            before()
        if address is None:
            return None
        return start_web(app, console, web, *address, extras=extras)

    return ready


def start_web(app: Launcher, console: Console, web: config.Web, host: str,
              port: int, extras: Mapping[str, Any] | None = None) -> Callable[[], None]:
    """The web panel's server (the config's ``[web]``) on ``host``:``port`` over
    ``console``'s running configuration,
    started on a thread of its own, so that the reactor runs while it loads (aiohttp's
    imports take a quarter of a second here, seconds on a Pi Zero: no press or watchdog
    ping waits for them). It prints ``web: URL`` once it listens. Returns what stops it
    (after the reactor has stopped), which raises what stopped the start, if anything: a
    start that fails stops the reactor, and so ``launcher run``, as before READY."""
    reactor = app.reactor
    made: dict[str, Any] = {}
    failed: list[LauncherError] = []

    def begin() -> None:
        try:
            made["server"] = _web_server(app, console, web, host, port, extras,
                                         made.setdefault)
        except LauncherError as exc:
            failed.append(exc)
            reactor.post(reactor.stop)
        except Exception as exc:  # a bug: the firmware stops, and says why
            log.exception("web: the panel did not start")
            failed.append(LauncherError(f"web: the panel did not start: {exc}"))
            reactor.post(reactor.stop)

    starting = threading.Thread(target=begin, name="web-start", daemon=True)
    starting.start()

    def stop() -> None:
        starting.join()  # its wait for the socket is bounded (server.START_WAIT)
        server, bridge = made.get("server"), made.get("bridge")
        if server is not None:
            server.stop()
        if bridge is not None:
            bridge.close()
        if failed:
            raise failed[0]

    return stop


def _web_server(app: Launcher, console: Console, web: config.Web, host: str,
                port: int, extras: Mapping[str, Any] | None,
                keep: Callable[[str, Any], Any]) -> Any:
    """The web panel's server, listening (the start thread): its bridge listens to the
    launcher from the reactor thread, and is handed to ``keep`` for the stop."""
    from launcher.web.bridge import Bridge
    from launcher.web.tokens import TokenStore, token_path

    try:
        from launcher.web.server import WebServer
    except ImportError as exc:
        raise LauncherError(f"the web panel needs aiohttp ({exc}): the `web` extra, or "
                            "Debian's python3-aiohttp") from None

    tokens = TokenStore(token_path(app.state_path), web.token_days)
    tls = (Path(web.tls_cert), Path(web.tls_key)) if web.tls_cert else None
    bridge = keep("bridge", Bridge(app, console.config, extras=extras, pairing=app.pairing))
    app.reactor.post(bridge.attach)
    server = WebServer(bridge, tokens, host, port, max_streams=web.max_streams, tls=tls)
    server.start()
    print(f"web: {server.url}", flush=True)
    log.info("web panel on %s", server.url)
    return server


def _mock_asked_for(settings: config.Settings) -> bool:
    return settings.pin_factory == "mock" or os.environ.get("GPIOZERO_PIN_FACTORY") == "mock"


def _run_simulated(settings: config.Settings, reactor: Any, rng: random.Random, seed: int,
                   args: argparse.Namespace, web_at: tuple[str, int] | None) -> int:
    """The simulated launcher, its console on a new pty unless ``--port`` names one; the web
    panel on ``web_at``, if any."""
    from launcher.firmware.runner import run_firmware
    from launcher.firmware.transport import PtyTransport, Transport
    from launcher.sim.unit import console_extras, resume_cartridge, simulated_app

    log.warning("running on the SIMULATED launcher, state in %s", settings.state_path)
    app, sim = simulated_app(settings, reactor, rng, log.warning)
    made: list[PtyTransport] = []

    def on_pty(console: Console) -> Transport:
        made.append(PtyTransport(console, reactor))
        return made[0]

    def ready() -> None:
        resume_cartridge(app, sim)  # as `launcher play` starts: the saved count
        if not made:
            return
        path = made[0].path
        # stdout: the path alone, for a script; stderr: what to do with it, for a person.
        print(path, flush=True)
        print(f"launcher run: the simulated launcher's console is on {path}: "
              f"`launcher console {path}` or `python -m serial.tools.miniterm {path} "
              f"{settings.console.baud}`; Ctrl-C stops it", file=sys.stderr, flush=True)

    extras = console_extras(sim)
    return run_firmware(app, seed, config_path=args.config, serial=settings.console,
                        console_extras=extras,
                        open_console=None if args.port is not None else on_pty,
                        on_ready=web_on_ready(app, settings.web, web_at, extras, before=ready))
