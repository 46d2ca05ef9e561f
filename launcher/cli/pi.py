"""``launcher safe-stop`` and ``launcher selftest``: the Pi's service and bring-up commands."""

from __future__ import annotations

import argparse
import sys

from launcher.cli.options import verb

NOT_A_PI = ("launcher selftest: no Raspberry Pi here (or pin_factory = \"mock\"): "
            "`launcher selftest --auto` walks through the simulated launcher")


def register(subparsers: argparse._SubParsersAction) -> None:
    stop = verb(
        subparsers, "safe-stop",
        help="drive the motor and rotator pins low and exit (systemd runs it after every stop)",
        description="Drive nSLEEP, both motor inputs and the rotator's low, then exit: what "
        "systemd's ExecStopPost runs after every stop, crash, watchdog kill or kill -9, "
        "because a released GPIO line keeps its level (without strict_gpiod) and pigpiod "
        "keeps driving the pins when its client dies. The pins are the config's and those "
        "of the last good start (last-good-pins.json beside the state file), so a [pins] "
        "edited while the firmware ran cannot leave the old ones driven; a config broken "
        "elsewhere still gives its [pins].",
        examples=["sudo /opt/launcher/venv/bin/launcher safe-stop --config "
                  "/etc/launcher/launcher.toml"],
        exit_status="0 the pins were driven low (a line says which, and from where), 1 a "
        "pin could not be opened, 2 the config's pins cannot be read and none were "
        "remembered.")
    stop.add_argument("--config", metavar="FILE",
                      help="TOML config naming the pins (default: built-in defaults)")
    stop.set_defaults(func=_safe_stop)

    test = verb(
        subparsers, "selftest",
        help="walk through every part of the launcher and report PASS/FAIL for each",
        description="Walk through every part of a wired launcher on the Pi: it asks you to "
        "press the button, open and close the lid, open it fully (and watches the cartridge "
        "turn), pass a card through the exit beam, load cards for a short roller run, look at "
        "the LED and listen to each side; each part gets PASS or FAIL with a hint. Stop the "
        "service first. --auto runs the same steps on the simulated launcher, a script doing "
        "each one (anywhere, no prompts).",
        examples=["sudo systemctl stop launcher",
                  "/opt/launcher/venv/bin/launcher selftest --config "
                  "/etc/launcher/launcher.toml",
                  "launcher selftest --auto   # anywhere: the simulated launcher"],
        exit_status="0 every part passed, 1 a part failed, 2 not a Raspberry Pi (without "
        "--auto) or a bad config value, 130 Ctrl-C (motors off).")
    test.add_argument("--config", metavar="FILE",
                      help="TOML config naming the pins (default: built-in defaults)")
    test.add_argument("--auto", action="store_true",
                      help="no prompts: run against the SIMULATED launcher, a script doing "
                           "each step")
    test.set_defaults(func=_selftest)


def _safe_stop(args: argparse.Namespace) -> int:
    from launcher.firmware.safestop import cmd_safe_stop

    return cmd_safe_stop(args)


def _selftest(args: argparse.Namespace) -> int:
    from launcher.core import config
    from launcher.firmware.selftest import print_report, run_on_hardware

    settings = config.load(args.config)
    out = sys.stdout
    if args.auto:
        from launcher.sim.selftest import run_auto

        print("launcher selftest --auto: the SIMULATED launcher, a script doing each step",
              file=out)
        report = run_auto(settings, out)
    else:
        from hal.gpio import factory_name, pi_model

        if factory_name(settings.pin_factory, pi_model()) == "mock":
            # Said before any step is asked for: there is no board to walk through.
            print(NOT_A_PI, file=sys.stderr)
            return 2
        print("launcher selftest: do each step when asked; Ctrl-C stops (motors off).",
              file=out)
        print("Stop the service first if it runs: sudo systemctl stop launcher", file=out)
        hw = run_on_hardware(settings, out)
        if hw is None:
            print(NOT_A_PI, file=sys.stderr)
            return 2
        report = hw
    print_report(report, out)
    return 0 if report.ok else 1
