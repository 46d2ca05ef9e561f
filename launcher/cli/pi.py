"""``launcher safe-stop`` and ``launcher selftest``: the Pi's service and bring-up commands."""

from __future__ import annotations

import argparse


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
    from launcher.firmware.selftest import cmd_selftest

    return cmd_selftest(args)
