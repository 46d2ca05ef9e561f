"""The ``launcher`` command: run on a Pi, play on a laptop, check a config, and the rest."""

from __future__ import annotations

import argparse
import os
import sys

from launcher import __version__
from launcher.cli.options import Parser, host_port, verb, whole_number

# Only what `launcher --help` needs is imported here: each command imports what it runs
# (the config, the firmware, logging) inside its function (tests/cli/test_startup_imports.py).
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing for --help
if TYPE_CHECKING:
    from launcher.core import config


def _seed(settings: config.Settings, override: int | None) -> int:
    if override is not None:
        return override
    if settings.luck.seed is not None:
        return settings.luck.seed
    return int.from_bytes(os.urandom(4), "big")


def cmd_config_check(args: argparse.Namespace) -> int:
    from launcher.core import config
    from launcher.firmware.places import check_places
    from launcher.firmware.sound import load_pack

    settings = config.load(args.file)
    check_places(settings)  # the state file, the console port, the sound pack: the unit's own
    load_pack(settings.audio.pack)  # what `launcher run` reads at start: checked here too
    print(f"ok: {args.file}")
    return 0


def cmd_config_default(args: argparse.Namespace) -> int:
    from launcher.core import config

    sys.stdout.write(config.default_text())
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from launcher.cli.run import run_unit
    from launcher.core import config

    settings = config.load(args.config)
    return run_unit(args, settings, _seed(settings, args.seed))


def cmd_play(args: argparse.Namespace) -> int:
    from launcher.cli.paths import simulated_state
    from launcher.cli.play import run_play
    from launcher.core import config
    from launcher.core.errors import ConfigError
    from launcher.firmware.owner import owning
    from launcher.firmware.places import check_places

    if args.game is not None:
        from launcher.cli.play_game import run_seat

        settings = config.load(args.config)
        return run_seat(args.game, args.players, args.seat, args.bots, args.rule,
                        _seed(settings, args.seed), settings, args.direct, sys.stdin,
                        sys.stdout, scripted=not sys.stdin.isatty())
    settings = simulated_state(config.load(args.config), "play-state.json", args.state)
    try:
        check_places(settings)
    except ConfigError as exc:
        if not (args.state and exc.key == "state.path"):
            raise
        raise ConfigError("--state", exc.value, exc.reason) from None  # the user's own words
    # One seed, one output: a fixed seed or a script starts from a fresh unit, unless told.
    replayable = args.seed is not None or settings.luck.seed is not None
    resume = args.resume if args.resume is not None else not (
        replayable or not sys.stdin.isatty())
    with owning(settings.state_path):  # one process on a state file (firmware/owner.py)
        return run_play(settings, seed=_seed(settings, args.seed), lines=args.lines,
                        config_path=args.config, resume=resume)


# The verbs of the other cli modules, with the help line `launcher --help` shows for each.
# A module is imported only when one of its verbs is used, so `launcher --help` and
# `launcher run` load no games, sound tools, doctor or console client (tests/cli checks
# these lines against what each module registers).
LAZY_VERBS: dict[str, tuple[str, str]] = {
    "console": ("launcher.cli.console_client", "talk to a launcher's serial console"),
    "sounds": ("launcher.cli.sounds", "list, play, render or plot the sound cues"),
    "simulate": ("launcher.cli.simulate",
                 "play whole games (UNO Flip Attack, UNO, UNO Splash, UNO Flip, Gin Rummy) "
                 "with bots and print statistics"),
    "tune": ("launcher.cli.tune",
             "compare a luck configuration with the defaults over simulated games"),
    "safe-stop": ("launcher.cli.pi", "drive the motor and rotator pins low and exit "
                                     "(systemd runs it after every stop)"),
    "selftest": ("launcher.cli.pi",
                 "walk through every part of the launcher and report PASS/FAIL for each"),
    "doctor": ("launcher.cli.doctor",
               "check this Pi for the launcher: PASS/WARN/FAIL with the fix for each"),
    "web": ("launcher.cli.web", "list or revoke the web panel's tokens (its paired phones)"),
}


def _add_run(sub: argparse._SubParsersAction) -> None:
    run = verb(
        sub, "run", help=CORE_VERBS["run"],
        description="Run the firmware until SIGTERM or Ctrl-C: on a Raspberry Pi, on its "
        "board, with the serial console on console.port (what the systemd service does). "
        "Anywhere, --simulated runs it on the simulated launcher `launcher play` uses, its "
        "console on a new pty whose path is printed (for `launcher console PTY` or "
        "`python -m serial.tools.miniterm PTY`) and its state in "
        "$XDG_STATE_HOME/launcher (~/.local/state/launcher) unless the config names a "
        "state.path of its own.",
        examples=["launcher run --config /etc/launcher/launcher.toml   # on the Pi, as the "
                  "service does",
                  "launcher run --simulated --seed 1                 # anywhere: prints its "
                  "console's pty",
                  "launcher run --simulated --web 127.0.0.1:8080     # and the phone panel "
                  "on that address"],
        exit_status="0 stopped by SIGTERM or Ctrl-C (a service's normal end: systemd stops it "
        "with SIGTERM), 1 a hardware error or a --web address it cannot listen on, 2 a bad "
        "option or config value, or not a "
        "Raspberry Pi (without --simulated), 75 the console's `reboot-safe` (systemd starts "
        "it again).")
    run.add_argument("--config", metavar="FILE", help="TOML config (default: built-in defaults)")
    run.add_argument("--seed", type=whole_number(),
                     help="luck seed (default: luck.seed, else random)")
    run.add_argument("--simulated", action="store_true",
                     help="the firmware on the simulated launcher, not on GPIO pins")
    run.add_argument("--state", metavar="FILE",
                     help="state file (default: the config's state.path; with --simulated, "
                          "except that the Pi's is $XDG_STATE_HOME/launcher/run-state.json)")
    run.add_argument("--port", metavar="PORT",
                     help="the console's serial device or pyserial URL, \"\" for none "
                          "(default: console.port, /dev/serial0 in the built-in config; "
                          "with --simulated, a new pty)")
    run.add_argument("--web", metavar="HOST:PORT", type=host_port,
                     help="the web panel on HOST:PORT (default: web.host and web.port when "
                          "web.enabled), started once the firmware is up, its address "
                          "printed as `web: http://HOST:PORT/` on its own line of stdout "
                          "(with --simulated, after the pty's); port 0 picks a free port and "
                          "prints it. Needs the `web` extra (aiohttp)")
    run.set_defaults(func=cmd_run)


def _add_play(sub: argparse._SubParsersAction) -> None:
    play = verb(
        sub, "play", help=CORE_VERBS["play"],
        description="The real firmware on a simulated launcher (no hardware is driven). On a "
        "terminal it is driven by single keys with a live view of the state; otherwise (a "
        "pipe, a script, --lines, TERM=dumb) it reads one console command per line and "
        "prints the replies and events.\n\n"
        "Its state (side, escalation, cards, counters) is kept in "
        "$XDG_STATE_HOME/launcher/play-state.json (~/.local/state/launcher/play-state.json) "
        "unless --state or the config's state.path names another file. A run at a terminal "
        "resumes from it, as a unit does at power-on; a run with a fixed seed (--seed, "
        "luck.seed) or fed a script starts from a fresh unit, so that one seed and one "
        "script give one output. --resume and --no-resume decide it either way.\n\n"
        "With --game NAME it is a seat at a whole game instead, against the bots: the seat's "
        "view and its legal actions, numbered, one number a line (q to stop); the others' "
        "moves and the launcher's shots are printed as they come. The firmware on the "
        "simulated launcher shoots the cards (--direct: the game's own luck model). It plays "
        "through the one game-state contract (docs/games.md), at a terminal or from a "
        "script alike; --state, --resume and --lines are for the unit alone.",
        examples=["launcher play                     # keys; resumes the last session",
                  "launcher play --seed 1            # a fresh unit: one seed, one game",
                  "launcher play --seed 1 --resume   # the same seed, from the last state",
                  "printf 'press\\nwait 1\\nlid full\\nwait 2\\nstatus\\n' | "
                  "launcher play --seed 1",
                  "launcher play --game uno --players 3 --seed 1   # a seat at UNO",
                  "yes 1 | launcher play --game gin --rule game_target=25 --seed 1"],
        exit_status="0 after q, `quit`, the end of the input or (--game) the end of the game, "
        "1 a line of a script (not a terminal) answered `error`, 2 a bad option or config "
        "value, 130 Ctrl-C or SIGINT, 143 SIGTERM, 141 its output was closed.")
    play.add_argument("--config", metavar="FILE", help="TOML config (pins are ignored)")
    play.add_argument("--seed", type=whole_number(),
                      help="luck seed (default: luck.seed, else random)")
    play.add_argument("--state", metavar="FILE",
                      help="state file (default: the config's state.path, except that the "
                           "Pi's is $XDG_STATE_HOME/launcher/play-state.json here)")
    play.add_argument("--resume", action=argparse.BooleanOptionalAction, default=None,
                      help="start from the state file (default: at a terminal without a "
                           "fixed seed) or from a fresh unit (--no-resume: the default with "
                           "--seed, luck.seed or a script)")
    play.add_argument("--lines", action="store_true",
                      help="read whole command lines, no live view (default when stdin "
                           "is not a terminal, or TERM is dumb)")
    play.add_argument("--game", choices=GAME_NAMES, default=None,
                      help="take a seat at this game against the bots; --seed then seeds the "
                           "deal, the bots and the launcher (default: no game, the unit "
                           "alone)")
    play.add_argument("--players", type=whole_number(2), default=None,
                      help="--game: seats at the table (default: the game's, 4; gin 2)")
    play.add_argument("--seat", type=whole_number(), default=0,
                      help="--game: your seat, 0 first (default 0)")
    play.add_argument("--bots", default=None,
                      help="--game: the bots by seat, repeated to fill the table (the name "
                           "at your seat is not used; default heuristic)")
    play.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE",
                      help="--game: a house rule, as launcher simulate's; repeatable")
    play.add_argument("--direct", action="store_true",
                      help="--game: the game's luck model shoots, not the firmware on the "
                           "simulated launcher")
    play.set_defaults(func=cmd_play)


# The games' names only, so that `launcher play --help` imports no engine (checked against
# games.registry.GAMES by tests/games/test_play_seat.py).
GAME_NAMES = ("flip-attack", "uno", "uno-splash", "uno-flip", "gin")


def _add_config(sub: argparse._SubParsersAction) -> None:
    cfg = verb(sub, "config", help=CORE_VERBS["config"],
               description="Check a config file, or print the commented default one (every "
               "key, its range and what it does).",
               examples=["launcher config check /etc/launcher/launcher.toml",
                         "launcher config default > my.toml"])
    cfg_sub = cfg.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    check = verb(cfg_sub, "check", help="check a config file; exit 2 naming a bad key",
                 description="Read FILE as `launcher run` would at start (every key and "
                 "value, the pins against the buses they would take, the sound pack it "
                 "names) and print `ok: FILE`, or one line naming the first bad key.",
                 examples=["launcher config check /etc/launcher/launcher.toml",
                           "launcher config check docs/examples/wild-party.toml"],
                 exit_status="0 the file is good, 2 it is not (the line names the key).")
    check.add_argument("file", metavar="FILE")
    check.set_defaults(func=cmd_config_check)
    default = verb(cfg_sub, "default", help="print the commented default config",
                   description="Print launcher/default.toml: every key with its default, its "
                   "range and what it does. A config needs only the keys it changes.",
                   examples=["launcher config default | less",
                             "launcher config default > my.toml   # then edit and check it"],
                   exit_status="0.")
    default.set_defaults(func=cmd_config_default)


# The verbs of this module, with their help lines.
CORE_VERBS = {"run": "run the firmware on the board the config names",
              "play": "the firmware on a SIMULATED launcher, driven by keys or typed lines",
              "config": "check or print configuration"}
_ADD_CORE = {"run": _add_run, "play": _add_play, "config": _add_config}


def build_parser(verb: str | None = None, *, alone: bool = False) -> argparse.ArgumentParser:
    """The command line. ``verb`` given: only that verb's module is loaded, the other lazy
    verbs are listed by name and help alone (what ``main`` uses); None: every module.
    ``alone``: the parser has that verb and no other (a command line that starts with it
    needs no other: ``launcher run`` does not build a parser per verb at every start)."""
    p = Parser(
        prog="launcher",
        description="Firmware for the UNO Flip Attack card launcher. With no command: "
        "`run` on a Raspberry Pi, `play` (the simulated launcher) anywhere else.",
    )
    p.add_argument("--version", action="version", version=f"launcher {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="log debug detail")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    alone = alone and verb in (*CORE_VERBS, *LAZY_VERBS)
    for name, add in _ADD_CORE.items():
        if not alone or name == verb:
            add(sub)

    import importlib

    wanted = dict.fromkeys(module for name, (module, _) in LAZY_VERBS.items()
                           if verb is None or name == verb)
    for module in wanted:
        importlib.import_module(module).register(sub)
    if alone:  # the one verb's module may register others beside it
        for name in [n for n in sub.choices if n != verb]:
            del sub.choices[name]
        sub._choices_actions[:] = [a for a in sub._choices_actions if a.dest == verb]
    else:
        for name, (_, help_line) in LAZY_VERBS.items():
            if name not in sub.choices:
                # Listed in the help only; naming it on the command line loads its module.
                sub.add_parser(name, help=help_line, add_help=False)
        # The help lists the verbs in one order, however many modules were loaded.
        order = [*CORE_VERBS, *LAZY_VERBS]
        sub._choices_actions.sort(key=lambda action: order.index(action.dest))
    _verbose_everywhere(p)
    return p


def _verbose_everywhere(parser: argparse.ArgumentParser) -> None:
    """``-v`` after any verb too (``launcher play -v`` as ``launcher -v play``); SUPPRESS
    keeps a verb's parser from resetting a ``-v`` given before it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                child.add_argument("-v", "--verbose", action="store_true",
                                   default=argparse.SUPPRESS, help="log debug detail")
                _verbose_everywhere(child)


def _verb(words: list[str]) -> str:
    """The verb of a command line: its first word that is not an option ("" if none)."""
    return next((w for w in words if not w.startswith("-")), "")


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    verb = _verb(words)
    parser = build_parser(verb, alone=bool(words) and words[0] == verb)
    args = parser.parse_args(argv)
    if args.command is None:
        from hal.pins import pi_model

        args = parser.parse_args(["run" if pi_model() else "play", *(argv or sys.argv[1:])])
    # Parsed (`--help` and `--version` have exited by now): what every command needs.
    import logging
    import signal

    from hal.base import HalError
    from launcher.core.errors import ConfigError, LauncherError

    # The play screen shows every event on screen already; its log says only what goes wrong.
    level = logging.WARNING if args.command in ("play", "simulate", "tune") else logging.INFO
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else level,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        return int(args.func(args))
    except ConfigError as exc:
        # A command-line option (--rule, --bots) is not the config file: say just "error".
        kind = "error" if exc.key.startswith("--") else "config error"
        print(f"{kind}: {exc}", file=sys.stderr)
        return 2
    except (LauncherError, HalError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Whoever read our output has gone (`launcher play | head -3`): stop quietly with
        # the status a shell gives a program killed by SIGPIPE (128 + 13).
        _drop_stdout()
        return 128 + signal.SIGPIPE
    except OSError as exc:
        if exc.filename is None:
            raise
        # A path we were given cannot be used (read-only, missing folder, /proc): one line.
        print(f"error: {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return 1


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush has nowhere to fail."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file descriptor (a test's StringIO)
        pass
    finally:
        os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
