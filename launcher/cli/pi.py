"""``launcher safe-stop`` and ``launcher selftest``: the Pi's service and bring-up commands."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    stop = subparsers.add_parser(
        "safe-stop",
        help="drive the motor and rotator pins low and exit (systemd runs it after every stop)",
    )
    stop.add_argument("--config", metavar="FILE",
                      help="TOML config naming the pins (default: built-in defaults)")
    stop.set_defaults(func=_safe_stop)

    test = subparsers.add_parser(
        "selftest",
        help="walk through every part of the launcher and report PASS/FAIL for each",
    )
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
        print("launcher selftest: do each step when asked; Ctrl-C stops (motors off).",
              file=out)
        print("Stop the service first if it runs: sudo systemctl stop launcher", file=out)
        hw = run_on_hardware(settings, out)
        if hw is None:
            print("no Raspberry Pi here (or pin_factory = \"mock\"): use --auto for the "
                  "simulated launcher", file=sys.stderr)
            return 2
        report = hw
    print_report(report, out)
    return 0 if report.ok else 1
