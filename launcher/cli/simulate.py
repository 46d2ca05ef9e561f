"""``launcher simulate`` and ``launcher tune``: whole games with bots, and a luck report.

``simulate --game NAME`` looks the game up in ``GAMES``, one row per game: its bots and
the function that plays and reports it. A new game adds a row.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import math
import os
import random
import re
import statistics
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal, TextIO, get_args, get_origin, get_type_hints

from launcher.cli.options import verb, whole_number
from launcher.cli.paths import output_folder, writing
from launcher.core import config, luck
from launcher.core.config import Settings
from launcher.core.errors import MISSING, ConfigError, LauncherError
from launcher.firmware.disk import atomic_write
from launcher.games.cards import SIDES, load_deck
from launcher.games.flip_attack.bots import BOTS, make_bot
from launcher.games.flip_attack.record import Recorder
from launcher.games.flip_attack.rules import GameOptions, Table
from launcher.games.launchers import DirectLauncher, FirmwareLauncher
from launcher.games.stats import Summary, chi_square, format_summary


class Progress:
    """A plain progress bar on a stream (no rich, or not a terminal); redraws only when the
    shown share changes."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None,
                 width: int = 30) -> None:
        self.total = max(total, 1)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.done = 0
        self._shown = -1

    def update(self, n: int = 1) -> None:
        self.done += n
        filled = self.done * self.width // self.total
        if filled != self._shown:
            self._shown = filled
            bar = "#" * filled + "." * (self.width - filled)
            self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total}")
            self.stream.flush()

    def close(self) -> None:
        if self._shown >= 0:
            self.stream.write("\n")
            self.stream.flush()


class RichBar:
    """rich's progress bar: count, rate, elapsed and remaining time, on a terminal's stderr."""

    def __init__(self, total: int, label: str, console: Any = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            ProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as _Progress
        from rich.text import Text

        class Rate(ProgressColumn):
            def render(self, task: Any) -> Text:
                speed = task.finished_speed or task.speed
                return Text("" if speed is None else f"{speed:.1f} games/s", style="cyan")

        self._progress = _Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), Rate(),
            TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
            console=console if console is not None else Console(stderr=True), transient=False)
        self._task = self._progress.add_task(label, total=max(total, 1))
        self._progress.start()

    def update(self, n: int = 1) -> None:
        self._progress.advance(self._task, n)

    def close(self) -> None:
        self._progress.stop()


def progress_bar(total: int, label: str, forced: bool, disabled: bool,
                 terminal: bool) -> RichBar | Progress | None:
    """The bar for ``total`` steps: rich's on a terminal (if installed), a plain one when
    ``--progress`` asks for it elsewhere, none with ``--no-progress`` or off a terminal."""
    if disabled or not (forced or terminal):
        return None
    if terminal:
        try:
            return RichBar(total, label)
        except ImportError:
            pass
    return Progress(total, label)


def parse_bots(text: str, players: int, known: Sequence[str] = tuple(BOTS)) -> list[str]:
    """``heuristic,random`` -> one bot name per seat, repeating the list to fill the table."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ConfigError("--bots", text, "name at least one bot")
    for n in names:
        if n not in known:
            raise ConfigError("--bots", n, "must be one of " + ", ".join(known))
    return [names[i % len(names)] for i in range(players)]


# The smallest value each whole-number rule takes (GameOptions.__post_init__ refuses less;
# a test keeps the two in step).
RULE_MINIMUM = {"uno_penalty_presses": 0}


def split_rule(pair: str, names: Sequence[str], game: str) -> tuple[str, str]:
    """One ``--rule NAME=VALUE`` as (NAME, the VALUE's text), every game alike: a NAME that
    is not one of ``names`` (the rules of ``game``) is a ``ConfigError`` that lists them."""
    name, sep, raw = pair.partition("=")
    name, raw = name.strip(), raw.strip()
    if not sep or name not in names:
        why = f"no such rule in {game}" if sep else "must be NAME=VALUE"
        raise ConfigError(f"--rule {name}" if name else "--rule", raw if sep else MISSING,
                          f"{why}; NAME is one of " + ", ".join(names))
    return name, raw


def _rule_reason(message: str, name: str) -> str:
    """An engine's complaint about one rule, without the name and value the error line
    shows already (``hand_size = 'x': must be int``, ``hand_size must be ..., not 'x'``)."""
    message = re.sub(rf"^{re.escape(name)}( = .*?:)? ", "", message)
    return re.sub(r", not .*$", "", message)


def check_each_rule(pairs: Sequence[str], names: Sequence[str], game: str,
                    build: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    """``--rule`` pairs as {name: value}, checked by ``build`` (the game's options from the
    changes). When they fail together, each is tried alone to name the bad one (``--rule
    hand_size = 'x'``); a clash of good ones is named as the pairs together."""
    values = {name: config.parse_value(raw)
              for name, raw in (split_rule(pair, names, game) for pair in pairs)}
    try:
        build(values)
    except (TypeError, ValueError) as exc:  # ConfigError is a ValueError
        for name, value in values.items():
            try:
                build({name: value})
            except (TypeError, ValueError) as alone:
                raise ConfigError(f"--rule {name}", value,
                                  _rule_reason(_reason(alone), name)) from None
        raise ConfigError("--rule", ", ".join(pairs), _reason(exc)) from None
    return values


def _reason(exc: Exception) -> str:
    return exc.reason if isinstance(exc, ConfigError) else str(exc)


def check_rule(pair: str, options: type = GameOptions) -> tuple[str, Any]:
    """One ``--rule NAME=VALUE``, checked against the field's type: (name, value).

    A bad one is a ``ConfigError`` naming ``--rule NAME`` and what that rule accepts.
    """
    name, raw = split_rule(pair, [f.name for f in fields(options)], "flip-attack")
    kind = get_type_hints(options)[name]
    value = config.parse_value(raw)
    if get_origin(kind) is Literal:
        choices = get_args(kind)
        if value not in choices:
            raise ConfigError(f"--rule {name}", raw, "must be one of " + ", ".join(choices))
    elif kind is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"--rule {name}", raw, "must be true or false")
    elif kind is int:
        lo = RULE_MINIMUM.get(name, 1)
        if isinstance(value, bool) or not isinstance(value, int) or value < lo:
            raise ConfigError(f"--rule {name}", raw, f"must be a whole number, at least {lo}")
    return name, value


def parse_options(pairs: Sequence[str], target: int | None = None,
                  players: int | None = None) -> GameOptions:
    """``NAME=VALUE`` house rules (``--rule``) laid over the defaults, each one checked;
    with ``players``, a rule that would do nothing at that table is refused too."""
    values: dict[str, Any] = dict(check_rule(pair) for pair in pairs)
    if target is not None:
        values["target_score"] = target
    try:
        options = GameOptions(**values)
    except (TypeError, ValueError) as exc:  # a rule the type check above does not cover
        raise ConfigError("--rule", ", ".join(pairs), str(exc)) from exc
    for name, value in values.items():
        why = options.idle(name, players) if players is not None else None
        if why:
            raise ConfigError(f"--rule {name}", value, f"does nothing in flip-attack: {why}")
    if players is not None:
        deck = len(load_deck())
        if players * options.hand_size + 2 > deck:  # as rules.deal refuses, before any game
            raise ConfigError("--players", players, f"{deck} cards cannot deal "
                              f"{options.hand_size} to each and turn a first discard")
    return options


# --- games on every core: one seed per game, chunks of games merged in order -------------


def game_seed(seed: int, index: int) -> int:
    """The seed of game ``index`` of the run seeded ``seed``: each game's every random choice
    follows from it alone, so a run gives the same summary however it is split (--jobs)."""
    return random.Random(f"launcher-game/{seed}/{index}").getrandbits(64)


def default_jobs() -> int:
    """Every core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


PER_SEAT = ("game_wins", "hand_wins")  # summary fields indexed by seat: added seat by seat


def merge_summary(into: Any, part: Any) -> Any:
    """Add the summary ``part`` (of later games) to ``into``: counts add, per-hand lists
    follow on, per-seat lists add by seat. Merging chunks in game order gives what one
    process playing every game would have made, down to the order of Counter keys."""
    for f in fields(into):
        mine, theirs = getattr(into, f.name), getattr(part, f.name)
        if f.name in ("bots", "game"):
            continue
        if isinstance(mine, Counter):
            mine.update(theirs)
        elif isinstance(mine, dict):
            for key, counts in theirs.items():
                mine.setdefault(key, Counter()).update(counts)
        elif isinstance(mine, list):
            if f.name in PER_SEAT:
                setattr(into, f.name, [a + b for a, b in zip(mine, theirs, strict=True)])
            else:
                mine.extend(theirs)
        elif isinstance(mine, int):
            setattr(into, f.name, mine + theirs)
        else:
            raise TypeError(f"cannot merge {type(into).__name__}.{f.name}")
    return into


def _chunks(games: int, jobs: int) -> list[tuple[int, int]]:
    # Several chunks a worker, so that a slow chunk does not leave a core idle at the end.
    size = max(1, min(50, math.ceil(games / (jobs * 8))))
    return [(start, min(games, start + size)) for start in range(0, games, size)]


def _quiet_worker() -> None:
    # The workers log what goes wrong only: the firmware logs every event at INFO.
    logging.getLogger("launcher").setLevel(logging.WARNING)


@contextlib.contextmanager
def _safe_path() -> Iterator[None]:
    """Start worker processes with no current folder on their ``sys.path``.

    A worker (and the forkserver every worker is forked from) is a fresh interpreter run
    with ``-c``, which puts the current folder first on its path: a folder named ``launcher``
    or ``hal`` there (an empty one will do, or ``/opt/launcher`` seen from ``/opt``) would be
    imported in place of the installed package. ``PYTHONSAFEPATH`` (Python 3.11+) tells the
    interpreter not to; it is set only while the processes start.
    """
    before = os.environ.get("PYTHONSAFEPATH")
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["PYTHONSAFEPATH"]
        else:
            os.environ["PYTHONSAFEPATH"] = before


def play_games(play: Callable[[int, int], Any], games: int, jobs: int = 1,
               progress: Callable[[int], object] | None = None) -> Any:
    """``play(start, stop)`` plays games ``start`` to ``stop - 1`` and returns their summary;
    chunks of games run on ``jobs`` processes (``concurrent.futures``) and their summaries
    are merged in game order. ``play`` must be picklable (a module-level function or a
    ``functools.partial`` of one). A worker process that dies stops the run with a
    ``LauncherError`` (one line), never a pool that starts another forever."""
    chunks = _chunks(games, jobs)
    pool: ProcessPoolExecutor | None = None
    if jobs <= 1 or len(chunks) == 1:
        results: Iterator[Any] = (play(*c) for c in chunks)
    else:
        import multiprocessing

        # forkserver: no fork of a process whose threads (a progress bar's) hold locks.
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("forkserver" if "forkserver" in methods
                                              else "spawn")
        if context.get_start_method() == "forkserver":
            # The server imports the games once; each worker is forked from it, ready.
            context.set_forkserver_preload([play_games.__module__,
                                            getattr(play, "func", play).__module__])
        pool = ProcessPoolExecutor(min(jobs, len(chunks)), mp_context=context,
                                   initializer=_quiet_worker)
        with _safe_path():  # every process starts inside this call
            results = pool.map(play, *zip(*chunks, strict=True))
    summary = None
    try:
        for (start, stop), part in zip(chunks, results, strict=True):
            summary = part if summary is None else merge_summary(summary, part)
            if progress is not None:
                progress(stop - start)
    except BrokenProcessPool as exc:
        raise LauncherError(f"a worker process died ({exc}); "
                            "--jobs 1 plays every game in this process") from None
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return summary


def flip_attack_games(bots: Sequence[str], settings: Settings, options: GameOptions,
                      seed: int, through_firmware: bool, check: bool, start: int,
                      stop: int) -> Summary:
    """Games ``start`` to ``stop - 1`` of a run: each with its own launcher, bots and table."""
    deck = load_deck()
    summary = Summary(bots=list(bots))
    for g in range(start, stop):
        rng = random.Random(game_seed(seed, g))
        launcher: DirectLauncher | FirmwareLauncher
        if through_firmware:
            launcher = FirmwareLauncher(settings=settings, seed=rng.getrandbits(32))
        else:
            launcher = DirectLauncher(settings.luck, random.Random(rng.getrandbits(64)))
        players = [make_bot(name, random.Random(rng.getrandbits(64)), settings.luck)
                   for name in bots]
        recorder = Recorder(summary)
        table = Table(launcher, players, random.Random(rng.getrandbits(64)), options, deck,
                      observers=[recorder.observe], check=check)
        try:
            recorder.game(table.play_game(first_dealer=g % len(bots)))
        finally:
            if isinstance(launcher, FirmwareLauncher):
                recorder.faults(launcher.faults)
                launcher.close()
    return summary


def simulate(games: int, players: int, seed: int, bots: Sequence[str], settings: Settings,
             options: GameOptions, through_firmware: bool = False,
             progress: Callable[[int], object] | None = None, check: bool = False,
             jobs: int = 1) -> Summary:
    """Play ``games`` whole games on ``jobs`` processes; every random choice follows from
    ``seed`` and the game's index (``game_seed``), so ``jobs`` never changes the summary."""
    if len(bots) != players:
        raise ValueError(f"{len(bots)} bots for {players} players")
    play = functools.partial(flip_attack_games, tuple(bots), settings, options, seed,
                             through_firmware, check)
    return play_games(play, games, jobs, progress)


def _bar(args: argparse.Namespace, total: int, label: str) -> RichBar | Progress | None:
    return progress_bar(total, label, forced=args.progress, disabled=args.no_progress,
                        terminal=sys.stderr.isatty())


def cmd_simulate(args: argparse.Namespace) -> int:
    entry = GAMES.get(args.game)
    if entry is None:
        raise ConfigError("--game", args.game, "must be one of " + ", ".join(GAMES))
    if args.game != "gin":
        if getattr(args, "variant", None):
            raise ConfigError("--variant", args.variant, "is for --game gin")
        if args.players is None:  # None only tells gin that --players was not given
            args.players = 4
    if args.deal_with_launcher and args.game in ("flip-attack", "gin"):
        why = ("the hands are dealt before the launcher is loaded" if args.game == "flip-attack"
               else "the table deals the hands, the launcher holds the stock")
        raise ConfigError("--game", args.game, "--deal-with-launcher is for uno, uno-splash and "
                          f"uno-flip ({args.game}: {why})")
    return entry.run(args)


def _simulate_flip_attack(args: argparse.Namespace) -> int:
    settings = config.load(args.config)
    bots = parse_bots(args.bots, args.players)
    options = parse_options(args.rule, args.target, args.players)
    bar = _bar(args, args.games, "simulate")
    log = logging.getLogger("launcher")
    level = log.level
    if not getattr(args, "verbose", False):
        # The firmware logs every event at INFO; thousands of games would drown the summary.
        log.setLevel(logging.WARNING)
    try:
        summary = simulate(args.games, args.players, args.seed, bots, settings, options,
                           args.through_firmware, bar.update if bar else None, args.check,
                           args.jobs)
    finally:
        log.setLevel(level)
        if bar:
            bar.close()
    where = "through the firmware (simulated launcher)" if args.through_firmware else \
        "direct luck model"
    print(format_summary(summary, f"UNO Flip Attack, {where}, seed {args.seed}"))
    return _firmware_faults(summary.faults) if args.through_firmware else 0


# --- the table games: classic UNO, UNO Splash, UNO Flip --------------------------------------


def parse_uno_options(game: Any, pairs: Sequence[str], target: int | None = None) -> Any:
    """``NAME=VALUE`` rules (``--rule``) over ``game``'s defaults; errors name the option."""
    from launcher.games.uno.rules import UnoOptions

    names = [n for n in UnoOptions.names() if n not in game.not_options]
    values = check_each_rule(pairs, names, game.name, lambda one: game.options(**one))
    if target is not None:
        values["target_score"] = target
    try:
        options = game.options(**values)
    except (TypeError, ValueError) as exc:
        raise ConfigError("--rule", ", ".join(pairs), str(exc)) from exc
    for name, value in values.items():
        why = options.idle(name)
        if why:
            raise ConfigError(f"--rule {name}", value, f"does nothing in {game.name}: {why}")
    return options


def table_games(game: Any, bots: Sequence[str], options: Any, seed: int, check: bool,
                deal_with_launcher: bool, through_firmware: bool, start: int, stop: int) -> Any:
    """Games ``start`` to ``stop - 1`` of a table-game run, each from its own seed.

    ``through_firmware``: each game's draw pile is the firmware on the simulated launcher,
    switched to the game's profile (``dealer``, ``uno-flip``, and ``deal N`` for the deal).
    """
    from launcher.games.launchers import DirectDealer, FirmwareLauncher
    from launcher.games.stats import UnoSummary
    from launcher.games.uno.bots import make_uno_bot
    from launcher.games.uno.rules import UnoTable

    rules = game.rules(options)
    sides = game.sides if len(game.sides) == 2 else game.sides * 2
    summary = UnoSummary(list(bots), game=game.name)
    for g in range(start, stop):
        rng = random.Random(game_seed(seed, g))
        launcher: Any = (FirmwareLauncher(seed=rng.getrandbits(32), sides=sides)
                         if through_firmware else DirectDealer(game.profile, sides))
        seats = [make_uno_bot(name, random.Random(rng.getrandbits(64))) for name in bots]
        try:
            table = UnoTable(rules, launcher, seats, random.Random(rng.getrandbits(64)),
                             check=check, deal_with_launcher=deal_with_launcher)
            summary.add(table.play_game())  # the players draw for the first dealer
        finally:
            if through_firmware:
                summary.faults.update(str(f.get("code", "?")) for f in launcher.faults)
                launcher.close()
    return summary


def simulate_table_game(game: Any, games: int, players: int, seed: int, bots: Sequence[str],
                        options: Any, progress: Callable[[int], object] | None = None,
                        check: bool = False, deal_with_launcher: bool = False,
                        jobs: int = 1, through_firmware: bool = False) -> Any:
    """Play ``games`` whole games of a table game; every random choice follows from ``seed``
    and the game's index, whatever ``jobs``."""
    play = functools.partial(table_games, game, tuple(bots), options, seed, check,
                             deal_with_launcher, through_firmware)
    return play_games(play, games, jobs, progress)


def _simulate_table_game(game: Any, args: argparse.Namespace) -> int:
    from launcher.games.stats import format_uno_summary
    from launcher.games.uno.bots import UNO_BOTS

    bots = parse_bots(args.bots, args.players, UNO_BOTS)
    options = parse_uno_options(game, args.rule, args.target)
    rules = game.rules(options)
    if args.players * options.hand_size + 1 > rules.size:
        raise ConfigError("--players", args.players,
                          f"{rules.size} cards cannot deal {options.hand_size} to each")
    bar = _bar(args, args.games, "simulate")
    try:
        summary = simulate_table_game(game, args.games, args.players, args.seed, bots, options,
                                      bar.update if bar else None, args.check,
                                      args.deal_with_launcher, args.jobs,
                                      args.through_firmware)
    finally:
        if bar:
            bar.close()
    where = "through the firmware (simulated launcher)" if args.through_firmware else \
        "direct dealer"
    print(format_uno_summary(summary, f"{game.title}, {len(bots)} players, {where}, "
                                      f"seed {args.seed}", flips=len(game.sides) == 2))
    return _firmware_faults(summary.faults) if args.through_firmware else 0


def _firmware_faults(faults: Counter[str]) -> int:
    """Print the ``firmware faults`` line of a ``--through-firmware`` run: 1 if any."""
    total = sum(faults.values())
    detail = ", ".join(f"{k} {v}" for k, v in sorted(faults.items()))
    print(f"firmware faults: {total}" + (f" ({detail})" if detail else ""))
    return 1 if total else 0


def _table_game(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """The runner of a table game, importing its module only when it is played."""

    def run(args: argparse.Namespace) -> int:
        import importlib

        return _simulate_table_game(getattr(importlib.import_module(module), name), args)

    return run


@dataclass(frozen=True)
class GameEntry:
    """One row of ``launcher simulate --game``."""

    help: str
    run: Callable[[argparse.Namespace], int]


GAMES: dict[str, GameEntry] = {
    "flip-attack": GameEntry("UNO Flip Attack against the launcher's luck (default)",
                             _simulate_flip_attack),
    "uno": GameEntry("classic UNO, the launcher dealing one card a press",
                     _table_game("launcher.games.uno.rules", "CLASSIC_UNO")),
    "uno-splash": GameEntry("UNO Splash", _table_game("launcher.games.uno.splash", "UNO_SPLASH")),
    "uno-flip": GameEntry("UNO Flip, one card a press and a lid cycle per Flip",
                          _table_game("launcher.games.uno.flip", "UNO_FLIP_GAME")),
    "gin": GameEntry("Gin Rummy for two, the launcher dispensing the stock (--variant)",
                     lambda args: cmd_simulate_gin(args)),
}


# --- tune ---------------------------------------------------------------------------------


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else math.nan


def _diff(a: Sequence[int], b: Sequence[int]) -> str:
    """Difference of two means with its 95% interval (normal approximation)."""
    if len(a) < 2 or len(b) < 2:
        return "-"
    d = _mean(b) - _mean(a)
    se = math.sqrt(statistics.variance(a) / len(a) + statistics.variance(b) / len(b))
    mark = " *" if se > 0 and abs(d) > 1.96 * se else ""
    return f"{d:+.2f} ± {1.96 * se:.2f}{mark}"


def _fit(summary: Summary, settings: Settings, side: str) -> str:
    """Chi-square p-value of the observed shot sizes against the configured weights.

    Shots at the end of a cartridge are cut short, so a low p can mean a small deck.
    """
    sl = settings.luck.side(side)
    observed = [summary.press_cards[side][s] for s in sl.sizes]
    total = sum(sl.weights)
    if sum(observed) < 20:
        return "-"
    _, df, p = chi_square(observed, [w / total for w in sl.weights])
    return f"{p:.3f}" if df else "-"


def tune_report(base: Summary, new: Summary, base_settings: Settings, new_settings: Settings,
                config_name: str, games: int, seed: int, plots: list[str],
                skipped: str | None) -> str:
    """The Markdown report comparing a luck configuration with the defaults."""
    rows: list[tuple[str, str, str, str]] = []

    def row(name: str, a: str, b: str, d: str = "") -> None:
        rows.append((name, a, b, d))

    for side in SIDES:
        sa, sb = base_settings.luck.side(side), new_settings.luck.side(side)
        row(f"{side}: shot rate, configured", f"{luck.shot_rate(sa):.1%}",
            f"{luck.shot_rate(sb):.1%}")
        row(f"{side}: shot rate, observed", f"{base.shot_rate(side):.1%}",
            f"{new.shot_rate(side):.1%}")
        row(f"{side}: cards per shot, configured", f"{luck.mean_shot(sa):.2f}",
            f"{luck.mean_shot(sb):.2f}")
        row(f"{side}: cards per shot, observed", f"{base.cards_per_shot(side):.2f}",
            f"{new.cards_per_shot(side):.2f}")
        row(f"{side}: cards per press, observed", f"{base.cards_per_press(side):.2f}",
            f"{new.cards_per_press(side):.2f}")
        row(f"{side}: longest dry streak (max possible)",
            f"{max(base.dry_runs[side], default=0)} ({sa.max_dry})",
            f"{max(new.dry_runs[side], default=0)} ({sb.max_dry})")
        row(f"{side}: shot sizes vs weights, chi-square p", _fit(base, base_settings, side),
            _fit(new, new_settings, side))
    for name, attr in (("turns per hand", "turns"), ("presses per hand", "presses"),
                       ("flips per hand", "flips"), ("reloads per hand", "reloads")):
        a, b = getattr(base, attr), getattr(new, attr)
        row(name, f"{_mean(a):.2f}", f"{_mean(b):.2f}", _diff(a, b))
    row("hands per game", f"{base.hands / max(base.games, 1):.2f}",
        f"{new.hands / max(new.games, 1):.2f}")
    row("hands stopped at the turn limit", str(base.unfinished), str(new.unfinished))
    for bot, (g, _) in base.win_rates_by_bot().items():
        row(f"{bot} bot: games won per seat", f"{g:.1%}", f"{new.win_rates_by_bot()[bot][0]:.1%}")
    bust_a = base.luck_busts / base.luck_runs if base.luck_runs else math.nan
    bust_b = new.luck_busts / new.luck_runs if new.luck_runs else math.nan
    row("Wild Press Your Luck runs that shot", f"{bust_a:.0%}", f"{bust_b:.0%}")

    out = [
        f"# Luck tuning report: {config_name}",
        "",
        f"{games} games of UNO Flip Attack with each luck configuration, "
        f"{base.players} players ({', '.join(base.bots)}), seed {seed}; the same seeds for "
        "both, through the direct luck model. `*` marks a difference of means outside "
        "its 95% interval.",
        "",
        "| measure | defaults | this config | difference |",
        "|---|---:|---:|---:|",
        *(f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows),
        "",
        "## Luck tables",
        "",
    ]
    for side in SIDES:
        sa, sb = base_settings.luck.side(side), new_settings.luck.side(side)
        out += [f"- {side}, defaults: hazard {list(sa.hazard)}, sizes {list(sa.sizes)}, "
                f"weights {list(sa.weights)}",
                f"- {side}, this config: hazard {list(sb.hazard)}, sizes {list(sb.sizes)}, "
                f"weights {list(sb.weights)}"]
    out += ["", "## Plots", ""]
    if skipped:
        out.append(f"Plots skipped: {skipped}")
    for p in plots:
        out.append(f"![{Path(p).stem}]({Path(p).name})")
    out += ["", "## Summaries", "", "### Defaults", "", "```", format_summary(base), "```", "",
            "### This config", "", "```", format_summary(new), "```", ""]
    return "\n".join(out)


def tune_plots(base: Summary, new: Summary, base_settings: Settings, new_settings: Settings,
               out: Path) -> list[str]:
    """Write the comparison plots as PNG files; raises ImportError without matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written: list[str] = []
    labels = ("defaults", "this config")

    def save(fig: Any, name: str) -> None:
        path = out / name
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(str(path))

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, side in zip(axes, SIDES, strict=True):
        for label, s in zip(labels, (base_settings, new_settings), strict=True):
            h = s.luck.side(side).hazard
            ax.plot(range(len(h)), h, marker="o", label=label)
        ax.set_title(f"{side}: hazard curve")
        ax.set_xlabel("dry presses since the last shot")
        ax.set_ylabel("P(shot)")
        ax.set_ylim(0, 1.05)
        ax.legend()
    save(fig, "hazard.png")

    def shares(field: str, keep_zero: bool, title: str, xlabel: str, name: str) -> None:
        """Per side, both runs side by side: the share of shots at each value."""
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for ax, side in zip(axes, SIDES, strict=True):
            width = 0.4
            for i, (label, s) in enumerate(zip(labels, (base, new), strict=True)):
                c = getattr(s, field)[side]
                ks = sorted(k for k in c if k or keep_zero)
                total = sum(c[k] for k in ks) or 1
                ax.bar([k + (i - 0.5) * width for k in ks], [c[k] / total for k in ks],
                       width=width, label=label)
            ax.set_title(f"{side}: {title} (observed)")
            ax.set_xlabel(xlabel)
            ax.set_ylabel("share of shots")
            ax.legend()
        save(fig, name)

    shares("dry_runs", True, "dry presses before a shot", "dry streak", "dry_streaks.png")
    shares("press_cards", False, "cards per shot", "cards", "shot_sizes.png")

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, attr in zip(axes, ("turns", "presses"), strict=True):
        top = max([*getattr(base, attr), *getattr(new, attr), 1])
        bins = list(range(0, top + 10, max(1, top // 40)))
        for label, s in zip(labels, (base, new), strict=True):
            ax.hist(getattr(s, attr), bins=bins, histtype="step", density=True, label=label)
        ax.set_title(f"{attr} per hand")
        ax.set_xlabel(attr)
        ax.legend()
    save(fig, "hand_length.png")
    return written


def cmd_tune(args: argparse.Namespace) -> int:
    if args.game != "flip-attack":
        raise ConfigError("--game", args.game, "tune plays UNO Flip Attack only, the one game "
                          "with luck to tune (`launcher simulate --game "
                          f"{args.game}` plays the others)")
    base_settings = config.load(None)
    new_settings = config.load(args.config)
    bots = parse_bots(args.bots, args.players)
    options = parse_options(args.rule, players=args.players)
    # The folder before the games (fail in a second, not a minute); one made for a run
    # that does not finish (an error, Ctrl-C) is taken away again.
    with output_folder(args.out, "--out") as out:
        return _tune(args, out, base_settings, new_settings, bots, options)


def _tune(args: argparse.Namespace, out: Path, base_settings: Settings, new_settings: Settings,
          bots: Sequence[str], options: GameOptions) -> int:
    """``launcher tune``'s games, plots and report, written into ``out``."""
    bar = _bar(args, 2 * args.games, "tune")
    try:
        tick = bar.update if bar else None
        base = simulate(args.games, args.players, args.seed, bots, base_settings, options,
                        progress=tick, jobs=args.jobs)
        new = simulate(args.games, args.players, args.seed, bots, new_settings, options,
                       progress=tick, jobs=args.jobs)
    finally:
        if bar:
            bar.close()
    plots: list[str] = []
    skipped = None
    with writing(out, "--out"):
        try:
            plots = tune_plots(base, new, base_settings, new_settings, out)
        except ImportError:
            skipped = "matplotlib is not installed (pip install 'uno-launcher[plots]')."
        report = tune_report(base, new, base_settings, new_settings, args.config, args.games,
                             args.seed, plots, skipped)
        path = out / "report.md"
        atomic_write(path, report)
    print(f"wrote {path}" + (f" and {len(plots)} plots" if plots else ""))
    if skipped:
        print(f"plots skipped: {skipped}")
    return 0


# --- registration ---------------------------------------------------------------------------


def _common(p: argparse.ArgumentParser, games: int, table_games: bool) -> None:
    """The options ``simulate`` and ``tune`` share; ``table_games``: the UNO games and gin
    too (simulate), not only UNO Flip Attack (tune)."""
    p.add_argument("--players", type=whole_number(2), default=4,
                   help="players at the table (default 4)")
    p.add_argument("--games", type=whole_number(1), default=games,
                   help=f"whole games, each to the target score (default {games})")
    p.add_argument("--seed", type=whole_number(), default=1,
                   help="seed of every random choice (default 1)")
    p.add_argument("--bots", default="heuristic,random",
                   help="bots by seat, repeated to fill the table: "
                        f"{', '.join(BOTS)}" + ("; the UNO games also random-play"
                                                if table_games else "")
                        + " (default heuristic,random)")
    p.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE",
                   help="a house rule (see docs/games.md: GameOptions for flip-attack"
                        + (", UnoOptions for the others" if table_games else "")
                        + "); repeatable")
    p.add_argument("--progress", action="store_true",
                   help="show the progress bar even when stderr is not a terminal")
    p.add_argument("--no-progress", action="store_true", help="never show the progress bar")
    p.add_argument("--jobs", type=whole_number(1), default=default_jobs(), metavar="N",
                   help="processes playing games at once (default: every core, here "
                        f"{default_jobs()}); the results are the same for any N")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``simulate`` and ``tune`` to the ``launcher`` command."""
    sim = verb(
        subparsers, "simulate", help="play whole games (UNO Flip Attack, UNO, UNO Splash, UNO "
                                     "Flip, Gin Rummy) with bots and print statistics",
        description="Play whole games with bot players, the launcher drawing the cards (its "
        "luck model, or with --through-firmware the firmware on the simulated launcher), and "
        "print statistics: turns, presses, shots, flips and reloads per hand, wins by bot. "
        "Every random choice follows from --seed and the game's number, so a run gives the "
        "same summary for any --jobs. Rules, bots and figures: docs/games.md.",
        examples=["launcher simulate --players 4 --games 1000",
                  "launcher simulate --through-firmware --games 20   # through the pins",
                  "launcher simulate --game uno --rule hand_size=5",
                  "launcher simulate --game gin --variant oklahoma --games 200"],
        exit_status="0 done, 1 a firmware fault in a --through-firmware game (or a worker "
        "process died), 2 a bad option, rule or config value (one line naming it), 130 "
        "Ctrl-C.")
    _common(sim, 100, table_games=True)
    sim.add_argument("--game", default="flip-attack", choices=list(GAMES),
                     help="; ".join(f"{k}: {v.help}" for k, v in GAMES.items()))
    sim.add_argument("--check", action="store_true",
                     help="check card conservation after every step (slower; for debugging)")
    sim.add_argument("--deal-with-launcher", action="store_true",
                     help="table games: deal the hands with the launcher's 'deal N' profile")
    sim.add_argument("--config", metavar="FILE", help="TOML config whose luck to use")
    sim.add_argument("--target", type=whole_number(1),
                     help="points that win a game (default 500)")
    sim.add_argument("--through-firmware", action="store_true",
                     help="draw through the firmware on the simulated launcher (pins and "
                          "manual reactor) instead of the direct luck model; exit 1 on a fault")
    sim.set_defaults(func=cmd_simulate)
    add_gin_arguments(sim)

    tune = verb(
        subparsers, "tune",
        help="compare a luck configuration with the defaults over simulated games",
        description="Play UNO Flip Attack with the default luck and with a config's luck, the "
        "same seeds for both, and write a report with plots. Only UNO Flip Attack has luck to "
        "tune: the other games deal one card a press.",
        examples=["launcher tune --config docs/examples/wild-party.toml --games 200 --seed 1",
                  "launcher tune --config my.toml --out my-report   # my-report/report.md"],
        exit_status="0 the report was written, 2 a bad option or config value (one line "
        "naming it; no folder is left behind), 130 Ctrl-C (a folder made for the run is "
        "taken away again).")
    _common(tune, 300, table_games=False)
    tune.add_argument("--game", default="flip-attack",
                      help="flip-attack, the only game with luck to tune (default)")
    tune.add_argument("--config", metavar="FILE", required=True, help="TOML config to try")
    tune.add_argument("--out", metavar="DIR", default="tune-report",
                      help="folder for report.md and the plots (default ./tune-report)")
    tune.set_defaults(func=cmd_tune)



# --- gin rummy: `launcher simulate --game gin` ----------------------------------------------


def add_gin_arguments(sim: argparse.ArgumentParser) -> None:
    """``--variant`` on ``simulate``; everything gin needs stays below here."""
    from launcher.games.gin.variants import VARIANTS

    sim.add_argument("--variant", choices=tuple(VARIANTS), default=None,
                     help="gin rummy variant (default standard); see docs/games.md")
    # Gin is a two-player game: tell a --players the user gave from the default 4.
    sim.set_defaults(players=None)


def cmd_simulate_gin(args: argparse.Namespace) -> int:
    from launcher.games.gin.bots import BOTS as GIN_BOTS
    from launcher.games.gin.rules import GinRules
    from launcher.games.gin.variants import variant_rules

    if args.players not in (None, 2):
        raise ConfigError("--players", args.players, "gin rummy is a game for two players")
    if args.config:
        raise ConfigError("--config", args.config, "gin rummy has no luck to configure")
    names = [n.strip() for n in args.bots.split(",") if n.strip()]
    for n in names:
        if n not in GIN_BOTS:
            raise ConfigError("--bots", n, "must be one of " + ", ".join(GIN_BOTS))
    if not names:
        raise ConfigError("--bots", args.bots, "name at least one bot")
    bots = [names[i % len(names)] for i in range(2)]
    variant = args.variant or "standard"
    overrides = check_each_rule(args.rule, GinRules.names(), "gin",
                                lambda one: variant_rules(variant, one))
    if args.target is not None:
        overrides["game_target"] = args.target
    rules = variant_rules(variant, overrides)
    bar = _bar(args, args.games, "simulate")
    try:
        play = functools.partial(gin_games, tuple(bots), rules, args.seed, args.through_firmware)
        summary = play_games(play, args.games, args.jobs, bar.update if bar else None)
    finally:
        if bar:
            bar.close()
    where = "through the firmware" if args.through_firmware else "direct dealer"
    print(summary.format(f"Gin Rummy ({variant}), {where}, seed {args.seed}"))
    return 0


def gin_games(bots: Sequence[str], rules: Any, seed: int, through_firmware: bool, start: int,
              stop: int) -> Any:
    """Games ``start`` to ``stop - 1`` of a gin run, each from its own seed."""
    from launcher.games import dealers
    from launcher.games.gin.bots import make_bot as make_gin_bot
    from launcher.games.gin.table import GinTable
    from launcher.games.stats import GinSummary

    summary = GinSummary(bots=list(bots))
    for g in range(start, stop):
        rng = random.Random(game_seed(seed, g))
        players = [make_gin_bot(n, random.Random(rng.getrandbits(64))) for n in bots]
        dealer = None
        if through_firmware:
            dealer = dealers.FirmwareDealer(settings=config.load(None),
                                            seed=rng.getrandbits(32))
        table = GinTable(rules, players, random.Random(rng.getrandbits(64)), dealer)
        try:
            summary.add(table.play_game(first_dealer=g % 2))
        finally:
            table.dealer.close()
    return summary
