"""``launcher simulate`` and ``launcher tune``: whole games with bots, and a luck report.

``simulate --game NAME`` finds the game in ``launcher.games.registry.GAMES``: its options,
bots, summary and the way it plays (``launcher.games.base.GameSpec``), the same for every
game. A new game adds its spec there, nothing here.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import math
import os
import signal
import statistics
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, TextIO

from launcher.cli.options import verb, whole_number
from launcher.cli.paths import output_folder, writing
from launcher.core import config, luck
from launcher.core.config import Settings
from launcher.core.errors import ConfigError, LauncherError
from launcher.firmware.disk import atomic_write
from launcher.games.base import GameSpec, OptionError, Options, Run, Seats
from launcher.games.cards import SIDES
from launcher.games.flip_attack.summary import FlipAttackSummary
from launcher.games.registry import GAMES
from launcher.games.roster import Roster
from launcher.games.stats import chi_square


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


def parse_bots(text: str, players: int, known: Roster[Any] | Sequence[str] = tuple(
        GAMES["flip-attack"].bots)) -> list[str]:
    """``heuristic,random`` -> one bot name per seat, repeating the list to fill the table."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ConfigError("--bots", text, "name at least one bot")
    for n in names:
        if n not in known:
            raise ConfigError("--bots", n, "must be one of " + ", ".join(known))
    return [names[i % len(names)] for i in range(players)]


def parse_rules(spec: GameSpec, pairs: Sequence[str], target: int | None = None,
                variant: str | None = None, seats: Seats | None = None) -> Options:
    """``NAME=VALUE`` house rules (``--rule``, values in TOML syntax) and ``--target`` over the
    game's defaults (or ``variant``'s), each checked by the game's options: a bad one is a
    ``ConfigError`` naming ``--rule NAME`` (or ``--target``), the value and what the rule
    takes. With ``seats``, a rule that does nothing at that table (its bots too) is refused."""
    values: dict[str, Any] = {}
    keys: dict[str, str] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ConfigError("--rule", pair, "must be NAME=VALUE")
        values[name] = config.parse_value(raw.strip())
        keys[name] = f"--rule {name}"
    if target is not None:
        values[spec.target] = target
        keys[spec.target] = "--target"
    try:
        options = spec.options(values, variant)
    except OptionError as exc:
        raise ConfigError(keys.get(exc.key, f"--rule {exc.key}"), exc.value,
                          exc.reason) from None
    for name, value in values.items():
        why = spec.idle(options, name, seats) if seats is not None else None
        if why:
            raise ConfigError(keys[name], value,
                              f"does nothing in {variant or spec.name}: {why}")
    return options


# --- games on every core: one seed per game, chunks of games merged in order -------------


def default_jobs() -> int:
    """Every core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _chunks(games: int, jobs: int) -> list[tuple[int, int]]:
    # Several chunks a worker, so that a slow chunk does not leave a core idle at the end.
    size = max(1, min(50, math.ceil(games / (jobs * 8))))
    return [(start, min(games, start + size)) for start in range(0, games, size)]


def _quiet_worker() -> None:
    # Ctrl-C is the parent's to answer (launcher.cli.worker), and the workers log what goes
    # wrong only: the firmware logs every event at INFO.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
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
            context.set_forkserver_preload(["launcher.cli.worker", play_games.__module__,
                                            getattr(play, "func", play).__module__])
        pool = ProcessPoolExecutor(min(jobs, len(chunks)), mp_context=context,
                                   initializer=_quiet_worker)
    summary = None
    try:
        if pool is not None:
            # (``map`` submits every chunk at once: a worker that dies at its start breaks
            # the pool while later chunks are still being submitted.)
            with _safe_path():  # every process starts inside this call
                results = pool.map(play, *zip(*chunks, strict=True))
        for (start, stop), part in zip(chunks, results, strict=True):
            summary = part if summary is None else summary.merge(part)
            if progress is not None:
                progress(stop - start)
    except BrokenProcessPool as exc:
        raise LauncherError(f"a worker process died ({exc}); "
                            "--jobs 1 plays every game in this process") from None
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return summary


def play_chunk(game: str, run: Run, start: int, stop: int) -> Any:
    """Games ``start`` to ``stop - 1`` of ``run`` of the game named ``game`` (a worker's task:
    it finds the game in the registry, so only names and options cross to it)."""
    return GAMES[game].play(run, start, stop)


def simulate(game: str, run: Run, games: int, jobs: int = 1,
             progress: Callable[[int], object] | None = None) -> Any:
    """Play ``games`` whole games of ``game`` on ``jobs`` processes; every random choice
    follows from ``run.seed`` and the game's index (``game_seed``), so ``jobs`` never changes
    the summary."""
    return play_games(functools.partial(play_chunk, game, run), games, jobs, progress)


def _bar(args: argparse.Namespace, total: int, label: str) -> RichBar | Progress | None:
    return progress_bar(total, label, forced=args.progress, disabled=args.no_progress,
                        terminal=sys.stderr.isatty())


def _game(name: str) -> GameSpec:
    spec = GAMES.get(name)
    if spec is None:
        raise ConfigError("--game", name, "must be one of " + ", ".join(GAMES))
    return spec


def _listed(names: Sequence[str]) -> str:
    """``a, b and c``."""
    return " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else names[0]


def cmd_simulate(args: argparse.Namespace) -> int:
    spec = _game(args.game)
    if args.variant and not spec.variants:
        raise ConfigError("--variant", args.variant, "is for --game " + _listed(
            [n for n, g in GAMES.items() if g.variants]))
    if args.deal_with_launcher and spec.launcher_deal:
        dealt = _listed([n for n, g in GAMES.items() if g.launcher_deal is None])
        raise ConfigError("--game", args.game, f"--deal-with-launcher is for {dealt} "
                                               f"({args.game}: {spec.launcher_deal})")
    if args.config and not spec.luck:
        raise ConfigError("--config", args.config, f"{spec.title} has no luck to configure")
    players = spec.default_players if args.players is None else args.players
    settings = config.load(args.config)
    bots = tuple(parse_bots(args.bots, players, spec.bots))
    variant = args.variant or next(iter(spec.variants), None)
    options = parse_rules(spec, args.rule, args.target, variant, Seats(players, bots))
    why = spec.refuse_seats(options, players)
    if why:
        raise ConfigError("--players", players, why)
    firmware = None
    if args.through_firmware:
        from launcher.sim.games import FirmwareLauncher

        firmware = FirmwareLauncher
    run = Run(options, bots, args.seed, settings, args.check, args.deal_with_launcher,
              firmware, variant or "")
    bar = _bar(args, args.games, "simulate")
    log = logging.getLogger("launcher")
    level = log.level
    if not getattr(args, "verbose", False):
        # The firmware logs every event at INFO; thousands of games would drown the summary.
        log.setLevel(logging.WARNING)
    try:
        summary = simulate(spec.name, run, args.games, args.jobs, bar.update if bar else None)
    finally:
        log.setLevel(level)
        if bar:
            bar.close()
    print(summary.format(spec.heading(run)))
    return _firmware_faults(summary.faults) if args.through_firmware else 0


def _firmware_faults(faults: Counter[str]) -> int:
    """Print the ``firmware faults`` line of a ``--through-firmware`` run: 1 if any."""
    total = sum(faults.values())
    detail = ", ".join(f"{k} {v}" for k, v in sorted(faults.items()))
    print(f"firmware faults: {total}" + (f" ({detail})" if detail else ""))
    return 1 if total else 0


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


FIT_ALPHA = 0.01  # a chi-square p below this is flagged: the sizes do not follow the weights


def _fit(summary: FlipAttackSummary, settings: Settings, side: str) -> float | None:
    """Chi-square p-value of the whole shots' sizes against the configured weights (None:
    too few shots to test). A shot at the end of the cartridge is left out: the launcher may
    have held fewer cards than the size drawn, and shot what it had."""
    sl = settings.luck.side(side)
    observed = [summary.whole_shots[side][s] for s in sl.sizes]
    total = sum(sl.weights)
    if sum(observed) < 20:
        return None
    _, df, p = chi_square(observed, [w / total for w in sl.weights])
    return p if df else None


def _p(p: float | None) -> str:
    return "-" if p is None else f"{p:.3f}" + (" !" if p < FIT_ALPHA else "")


def tune_report(base: FlipAttackSummary, new: FlipAttackSummary, base_settings: Settings,
                new_settings: Settings, config_name: str, games: int, seed: int,
                plots: list[str], skipped: str | None) -> str:
    """The Markdown report comparing a luck configuration with the defaults: the table,
    then a note for every kind of difference it flags."""
    rows: list[tuple[str, str, str, str]] = []
    runs = (("defaults", base, base_settings), ("this config", new, new_settings))

    def row(name: str, a: str, b: str, d: str = "") -> None:
        rows.append((name, a, b, d))

    unfit: list[str] = []  # "wild, this config (p 0.001)": sizes that do not follow weights
    for side in SIDES:
        sa, sb = base_settings.luck.side(side), new_settings.luck.side(side)
        row(f"{side}: shot rate, configured", f"{luck.shot_rate(sa):.1%}",
            f"{luck.shot_rate(sb):.1%}")
        row(f"{side}: shot rate, observed", f"{base.shot_rate(side):.1%}",
            f"{new.shot_rate(side):.1%}")
        row(f"{side}: cards per shot, configured", f"{luck.mean_shot(sa):.2f}",
            f"{luck.mean_shot(sb):.2f}")
        row(f"{side}: cards per whole shot, observed", f"{base.cards_per_whole_shot(side):.2f}",
            f"{new.cards_per_whole_shot(side):.2f}")
        row(f"{side}: cards per press, observed", f"{base.cards_per_press(side):.2f}",
            f"{new.cards_per_press(side):.2f}")
        row(f"{side}: longest dry streak (max possible)",
            f"{max(base.dry_runs[side], default=0)} ({sa.max_dry})",
            f"{max(new.dry_runs[side], default=0)} ({sb.max_dry})")
        row(f"{side}: shots at the end of the cartridge (took the last cards)",
            *(f"{sum(s.end_shots[side].values())} ({s.last_shots[side]})" for s in (base, new)))
        fits = [_fit(s, settings, side) for _, s, settings in runs]
        row(f"{side}: whole shots vs weights, chi-square p", *map(_p, fits))
        unfit += [f"{side}, {label} (p {p:.3f})" for (label, _, _), p in zip(runs, fits,
                                                                               strict=True)
                  if p is not None and p < FIT_ALPHA]
    moved: list[str] = []  # the means that differ beyond chance
    for name, attr in (("turns per hand", "turns"), ("presses per hand", "presses"),
                       ("flips per hand", "flips"), ("reloads per hand", "reloads")):
        a, b = getattr(base, attr), getattr(new, attr)
        d = _diff(a, b)
        row(name, f"{_mean(a):.2f}", f"{_mean(b):.2f}", d)
        if d.endswith("*"):
            moved.append(name)
    row("hands per game", f"{base.hands / max(base.games, 1):.2f}",
        f"{new.hands / max(new.games, 1):.2f}")
    row("hands stopped at the turn limit", str(base.unfinished), str(new.unfinished))
    for bot, (g, _) in base.win_rates_by_bot().items():
        row(f"{bot} bot: games won per seat", f"{g:.1%}", f"{new.win_rates_by_bot()[bot][0]:.1%}")
    bust_a = base.luck_busts / base.luck_runs if base.luck_runs else math.nan
    bust_b = new.luck_busts / new.luck_runs if new.luck_runs else math.nan
    row("Wild Press Your Luck runs that shot", f"{bust_a:.0%}", f"{bust_b:.0%}")

    notes = []
    for side in SIDES:
        ends = [sum(s.end_shots[side].values()) for _, s, _ in runs]
        if any(ends):
            largest = {max(st.luck.side(side).sizes) for _, _, st in runs}
            most = (str(*largest) if len(largest) == 1 else " and ".join(
                f"{max(st.luck.side(side).sizes)} {label}" for label, _, st in runs))
            notes.append(
                f"- {side}: {ends[0]} shots (defaults) and {ends[1]} (this config) came at "
                f"the end of the cartridge, with fewer cards in it than the largest shot "
                f"({most}); {base.last_shots[side]} and {new.last_shots[side]} of them took "
                "the last cards, cut short to what was left or no more than it. The launcher "
                f"runs empty: {_mean(base.reloads):.2f} and {_mean(new.reloads):.2f} reloads "
                f"a hand, {base.empty_presses} and {new.empty_presses} presses found it "
                "empty. These shots are counted apart, hatched in the shot-size plot, and "
                "left out of the chi-square test, which compares the whole shots with the "
                "weights.")
    under = [f"{side}, {label}: {luck.shot_rate(st.luck.side(side)):.1%} configured, "
             f"{s.shot_rate(side):.1%} observed" for side in SIDES for label, s, st in runs
             if s.shot_rate(side) < luck.shot_rate(st.luck.side(side))]
    if under:
        notes.append(f"- shot rate ({'; '.join(under)}): observed under configured because "
                     "every flip starts a new dry streak and the hazard curves rise with the "
                     "streak, so fewer presses reach a curve's high end than the configured "
                     "rate, worked out without flips, counts on (docs/games.md).")
    mild_same = base_settings.luck.side("mild") == new_settings.luck.side("mild")
    notes.append("- Wild Press Your Luck runs that shot: the card is of the Mild side, so its "
                 "presses draw from the Mild luck" + (
                     ", which this config leaves as it is: the two rates differ by chance "
                     "alone." if mild_same else ", which this config changes."))
    if unfit:
        notes.append(f"- `!` ({', '.join(unfit)}): the whole shots' sizes differ from the "
                     f"configured weights beyond chance (p < {FIT_ALPHA}), cut-short shots "
                     "left out: the draws do not follow the luck table.")
    if moved:
        notes.append(f"- `*` ({', '.join(moved)}): the two configurations' means differ "
                     "beyond their 95% interval: what this config changes in the game.")

    out = [
        f"# Luck tuning report: {config_name}",
        "",
        f"{games} games of UNO Flip Attack with each luck configuration, "
        f"{base.players} players ({', '.join(base.bots)}), seed {seed}; the same seeds for "
        "both, through the direct luck model. `*` marks a difference of means outside "
        f"its 95% interval, `!` a chi-square p below {FIT_ALPHA}; the notes below the "
        "table explain each.",
        "",
        "| measure | defaults | this config | difference |",
        "|---|---:|---:|---:|",
        *(f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows),
        "",
    ]
    if notes:
        out += ["## Notes", "", *notes, ""]
    out += ["## Luck tables", ""]
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
    out += ["", "## Summaries", "", "### Defaults", "", "```", base.format(), "```", "",
            "### This config", "", "```", new.format(), "```", ""]
    return "\n".join(out)


def tune_plots(base: FlipAttackSummary, new: FlipAttackSummary, base_settings: Settings,
               new_settings: Settings, out: Path) -> list[str]:
    """Write the comparison plots as PNG files; raises ImportError without matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    written: list[str] = []
    labels = ("defaults", "this config")

    def save(fig: Any, axes: Any, name: str) -> None:
        """The legend once, above the plots (in a plot it may hide a bar), and counts on
        whole-number axes."""
        for ax in axes:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        handles, names = axes[0].get_legend_handles_labels()
        fig.legend(handles, names, loc="upper center", ncol=len(names), frameon=False)
        fig.tight_layout(rect=(0, 0, 1, 0.9))
        path = out / name
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
    save(fig, axes, "hazard.png")

    width = 0.4
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, side in zip(axes, SIDES, strict=True):
        for i, (label, s) in enumerate(zip(labels, (base, new), strict=True)):
            c = s.dry_runs[side]
            ks = sorted(c)
            total = sum(c.values()) or 1
            ax.bar([k + (i - 0.5) * width for k in ks], [c[k] / total for k in ks],
                   width=width, label=label)
        ax.set_title(f"{side}: dry presses before a shot (observed)")
        ax.set_xlabel("dry streak")
        ax.set_ylabel("share of shots")
    save(fig, axes, "dry_streaks.png")

    # Shot sizes: whole shots solid, the shots at the end of the cartridge (which may have
    # been cut short to the cards left) hatched on top, as shares of every shot.
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, side in zip(axes, SIDES, strict=True):
        for i, (label, s) in enumerate(zip(labels, (base, new), strict=True)):
            whole, end = s.whole_shots[side], s.end_shots[side]
            ks = sorted(set(whole) | set(end))
            total = sum(whole.values()) + sum(end.values()) or 1
            xs = [k + (i - 0.5) * width for k in ks]
            bottom = [whole[k] / total for k in ks]
            bars = ax.bar(xs, bottom, width=width, label=label)
            ax.bar(xs, [end[k] / total for k in ks], width=width, bottom=bottom,
                   color=bars.patches[0].get_facecolor() if bars.patches else None,
                   alpha=0.45, hatch="//", label=f"{label}: at the end of the cartridge")
        ax.set_title(f"{side}: cards per shot (observed)")
        ax.set_xlabel("cards")
        ax.set_ylabel("share of shots")
    save(fig, axes, "shot_sizes.png")

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, attr in zip(axes, ("turns", "presses"), strict=True):
        top = max([*getattr(base, attr), *getattr(new, attr), 1])
        bins = list(range(0, top + 10, max(1, top // 40)))
        for label, s in zip(labels, (base, new), strict=True):
            values = getattr(s, attr)
            ax.hist(values, bins=bins, histtype="step", label=label,
                    weights=[1 / len(values)] * len(values) if values else None)
        ax.set_title(f"{attr} per hand")
        ax.set_xlabel(attr)
        ax.set_ylabel("share of hands")
    save(fig, axes, "hand_length.png")
    return written


def cmd_tune(args: argparse.Namespace) -> int:
    spec = _game(args.game)
    if not spec.luck:
        lucky = _listed([g.title for g in GAMES.values() if g.luck])
        raise ConfigError("--game", args.game, f"tune plays {lucky} only, the one game with "
                          f"luck to tune (`launcher simulate --game {args.game}` plays the "
                          "others)")
    base_settings = config.load(None)
    new_settings = config.load(args.config)
    bots = tuple(parse_bots(args.bots, args.players, spec.bots))
    options = parse_rules(spec, args.rule, seats=Seats(args.players, bots))
    why = spec.refuse_seats(options, args.players)
    if why:
        raise ConfigError("--players", args.players, why)
    # The folder before the games (fail in a second, not a minute); one made for a run
    # that does not finish (an error, Ctrl-C) is taken away again.
    with output_folder(args.out, "--out") as out:
        return _tune(args, out, spec, base_settings, new_settings, bots, options)


def _tune(args: argparse.Namespace, out: Path, spec: GameSpec, base_settings: Settings,
          new_settings: Settings, bots: Sequence[str], options: Options) -> int:
    """``launcher tune``'s games, plots and report, written into ``out``."""
    bar = _bar(args, 2 * args.games, "tune")
    try:
        tick = bar.update if bar else None
        base = simulate(spec.name, Run(options, bots, args.seed, base_settings), args.games,
                        args.jobs, tick)
        new = simulate(spec.name, Run(options, bots, args.seed, new_settings), args.games,
                       args.jobs, tick)
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
        os.chmod(path, _created_mode())  # as the plots beside it (atomic_write's is 0600)
    print(f"wrote {path}" + (f" and {len(plots)} plots" if plots else ""))
    if skipped:
        print(f"plots skipped: {skipped}")
    return 0


def _created_mode() -> int:
    """The permission bits a file made by ``open`` gets here (0666 less the umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


# --- registration ---------------------------------------------------------------------------


def _common(p: argparse.ArgumentParser, games: int, table_games: bool) -> None:
    """The options ``simulate`` and ``tune`` share; ``table_games``: the UNO games and gin
    too (simulate), not only UNO Flip Attack (tune)."""
    p.add_argument("--players", type=whole_number(2), default=None if table_games else 4,
                   help="players at the table (default 4" + ("; gin 2)" if table_games else ")"))
    p.add_argument("--games", type=whole_number(1), default=games,
                   help=f"whole games, each to the target score (default {games})")
    p.add_argument("--seed", type=whole_number(), default=1,
                   help="seed of every random choice (default 1)")
    p.add_argument("--bots", default="heuristic,random",
                   help="bots by seat, repeated to fill the table: "
                        f"{', '.join(GAMES['flip-attack'].bots)}"
                        + ("; the UNO games also random-play" if table_games else "")
                        + " (default heuristic,random)")
    p.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE",
                   help="a house rule (see docs/games.md: GameOptions for flip-attack"
                        + (", UnoOptions for the UNO games, GinRules for gin"
                           if table_games else "")
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
    variants = [(g.name, v) for g in GAMES.values() for v in g.variants]
    sim.add_argument("--variant", choices=[v for _, v in variants], default=None,
                     help="the variant of " + _listed(sorted({g for g, _ in variants}))
                          + f" (default {variants[0][1]}); see docs/games.md")
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
