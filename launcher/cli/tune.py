"""``launcher tune``: UNO Flip Attack with the default luck and with a config's, the same
seeds for both (``simulate.simulate``), and a report with plots."""

from __future__ import annotations

import argparse
import math
import os
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from launcher.cli import simulate as games
from launcher.cli.options import verb
from launcher.cli.paths import output_folder, writing
from launcher.core import config, luck
from launcher.core.config import Settings
from launcher.core.errors import ConfigError
from launcher.firmware.disk import atomic_write
from launcher.games.base import GameSpec, Options, Run, Seats
from launcher.games.cards import SIDES
from launcher.games.flip_attack.summary import FlipAttackSummary
from launcher.games.registry import GAMES
from launcher.games.stats import chi_square


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
    spec = games.game_spec(args.game)
    if not spec.luck:
        lucky = games.listed([g.title for g in GAMES.values() if g.luck])
        raise ConfigError("--game", args.game, f"tune plays {lucky} only, the one game with "
                          f"luck to tune (`launcher simulate --game {args.game}` plays the "
                          "others)")
    base_settings = config.load(None)
    new_settings = config.load(args.config)
    bots = tuple(games.parse_bots(args.bots, args.players, spec.bots))
    options = games.parse_rules(spec, args.rule, seats=Seats(args.players, bots))
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
    bar = games.progress_for(args, 2 * args.games, "tune")
    try:
        tick = bar.update if bar else None
        base = games.simulate(spec.name, Run(options, bots, args.seed, base_settings), args.games,
                        args.jobs, tick)
        new = games.simulate(spec.name, Run(options, bots, args.seed, new_settings), args.games,
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


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``tune`` to the ``launcher`` command."""
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
    games.common_options(tune, 300, table_games=False)
    tune.add_argument("--game", default="flip-attack",
                      help="flip-attack, the only game with luck to tune (default)")
    tune.add_argument("--config", metavar="FILE", required=True, help="TOML config to try")
    tune.add_argument("--out", metavar="DIR", default="tune-report",
                      help="folder for report.md and the plots (default ./tune-report)")
    tune.set_defaults(func=cmd_tune)
