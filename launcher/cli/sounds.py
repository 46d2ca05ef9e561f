"""``launcher sounds list|play|render|sheet``: look at, listen to and rebuild sound packs."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from hal.audio import NullSpeaker, read_wav
from launcher.cli.options import verb
from launcher.cli.paths import output_dir, writing
from launcher.core import config, cues
from launcher.core.reactor import NEVER, RealReactor
from launcher.firmware.sound import CuePlayer, Pack, build_cue_player, load_pack, sounds_dir
from launcher.tools import soundgen

PLOTS_HINT = "launcher sounds sheet needs matplotlib and numpy: pip install 'uno-launcher[plots]'"
WAIT_MARGIN = 2.0  # seconds a play may overrun its cue's length before we give up waiting


# The backends `sounds play` offers: the config's own (hal.audio.BACKENDS) less "recording",
# a test double that plays nothing.
PLAY_BACKENDS = tuple(b for b in config.AUDIO_BACKENDS if b != "recording")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = verb(subparsers, "sounds", help="list, play, render or plot the sound cues",
                  description="The sound cues: list a pack, play one cue on this machine's "
                  "speaker, rebuild the default pack from its generator, or draw a sheet of "
                  "every cue. How to change or replace a pack: sounds/README.md.",
                  examples=["launcher sounds list", "launcher sounds play mild_bam",
                            "launcher sounds sheet --out sheet.png"])
    sub = parser.add_subparsers(dest="sounds_command", metavar="COMMAND", required=True)

    def pack_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--config", metavar="FILE",
                       help="TOML config (default: built-in defaults)")
        p.add_argument("--pack", help="a pack folder name under sounds/ or a path "
                       "(default: audio.pack of the config)")

    p = verb(sub, "list", help="every cue of the pack, with its length and file",
             description="Every cue the firmware plays, with its length and its file in the "
             "pack (a pack missing a cue is refused by name).",
             examples=["launcher sounds list", "launcher sounds list --pack /etc/launcher/mine"],
             exit_status="0, 2 a pack that is missing or incomplete.")
    pack_options(p)
    p.set_defaults(func=cmd_list)

    p = verb(sub, "play", help="play one cue on the configured device and wait for it",
             description="Play one cue on this machine's speaker, as the firmware does (the "
             "amplifier's enable pin raised on a Pi), and wait for its end: a bring-up test "
             "of the speaker.",
             examples=["launcher sounds play mild_bam",
                       "launcher sounds play wild_flip --backend aplay"],
             exit_status="0 it was played, 1 it could not be (the line says why), 2 an "
             "unknown cue or a bad option.")
    p.add_argument("cue", help="a cue name (see `launcher sounds list`)")
    pack_options(p)
    p.add_argument("--backend", choices=PLAY_BACKENDS,
                   help="audio backend (default: audio.backend of the config): auto "
                        "(simpleaudio, else aplay, else none), simpleaudio, aplay, or null "
                        "(plays nothing: checks the pack and the amplifier pin)")
    p.set_defaults(func=cmd_play)

    p = verb(sub, "render", help="rebuild the default pack's WAV files from the generator",
             description="Write every cue of the default pack from its generator "
             "(launcher/tools/soundgen.py) and the pack's manifest; the tests check the "
             "committed pack against it byte for byte.",
             examples=["launcher sounds render                 # sounds/default",
                       "launcher sounds render --out /tmp/pack"],
             exit_status="0, 2 an --out that cannot be written.")
    p.add_argument("--out", type=Path, help="output folder (default: sounds/default)")
    p.set_defaults(func=cmd_render)

    p = verb(sub, "sheet", help="a PNG of every cue's waveform and spectrogram",
             description="Draw every cue of a pack, its waveform and spectrogram: each side's "
             "cues in its own column, the cues of both sides below (needs matplotlib: the "
             "plots extra).",
             examples=["launcher sounds sheet", "launcher sounds sheet --out /tmp/sheet.png"],
             exit_status="0, 2 without matplotlib, or an --out that cannot be written.")
    p.add_argument("--out", type=Path, default=Path("sounds-sheet.png"), metavar="FILE",
                   help="the PNG file (default: ./sounds-sheet.png)")
    pack_options(p)
    p.set_defaults(func=cmd_sheet)


def _warn(line: str) -> None:
    print(line, file=sys.stderr)


def _settings(args: argparse.Namespace) -> config.Settings:
    return config.load(args.config)


def _pack(args: argparse.Namespace, settings: config.Settings) -> Pack:
    return load_pack(args.pack or settings.audio.pack)


def cmd_list(args: argparse.Namespace) -> int:
    pack = _pack(args, _settings(args))
    print(f"pack {pack.root}")
    for cue in cues.all_cues():
        print(f"{cue:<14} {pack.durations[cue] * 1000:6.0f} ms  {pack.files[cue].name}")
    return 0


class _NoAmp:
    """Stands in for the amplifier enable when its pin cannot be had."""

    is_active = False

    def on(self) -> None:
        self.is_active = True

    def off(self) -> None:
        self.is_active = False

    def close(self) -> None:
        pass


def _open_amp(settings: config.Settings) -> Any:
    """The amplifier enable pin, so that a Pi's amp really sounds; a stand-in if it is busy."""
    from hal.gpio import GpioOutput, factory_name, make_factory, pi_model

    name = factory_name(settings.pin_factory, pi_model())
    try:
        return GpioOutput(settings.pins.amp_enable, make_factory(name))
    except Exception as exc:  # gpiozero has an error type per factory; any of them means "no pin"
        _warn(f"amp enable pin {settings.pins.amp_enable} unavailable ({exc}); "
              "playing without it (is the launcher service running?)")
        return _NoAmp()


def _wait(reactor: RealReactor, player: CuePlayer, limit: float) -> None:
    """Run the reactor until the cue is over and the player has lowered the amplifier."""
    deadline = reactor.monotonic() + limit

    def check(eventtime: float) -> float:
        done = (player.current is None and not player.speaker.is_playing
                and not player.amp.is_active)
        if done or eventtime > deadline:
            reactor.stop()
            return NEVER
        return eventtime + 0.02

    reactor.register_timer(check, reactor.monotonic(), "sounds.wait")
    reactor.run()


def cmd_play(args: argparse.Namespace) -> int:
    """Play one cue and wait; exit 1 when it was not heard (a bring-up test of the speaker)."""
    if args.cue not in cues.all_cues():
        _warn(f"error: unknown cue {args.cue!r}; one of: {', '.join(cues.all_cues())}")
        return 2
    settings = _settings(args)
    audio = replace(settings.audio, pack=args.pack or settings.audio.pack,
                    backend=args.backend or settings.audio.backend)
    settings = replace(settings, audio=audio)
    reactor = RealReactor()
    amp = _open_amp(settings)
    warnings: list[str] = []
    # One command, one failure line: the firmware's "carrying on without sound" warning is
    # for a service that plays on; here the error line below says it (-v shows both).
    quiet = (contextlib.nullcontext() if getattr(args, "verbose", False)
             else _quiet(logging.getLogger("hal.audio")))
    with quiet:
        return _play(args, settings, audio, reactor, amp, warnings)


@contextlib.contextmanager
def _quiet(log: logging.Logger) -> Iterator[None]:
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def _play(args: argparse.Namespace, settings: config.Settings, audio: Any,
          reactor: RealReactor, amp: Any, warnings: list[str]) -> int:
    try:
        player = build_cue_player(settings.audio, amp, reactor, warnings.append)
        try:
            silent = silent_reason(player.speaker, audio.backend, warnings)
            if silent is None:
                for line in warnings:
                    _warn(line)
                player.play(args.cue)
                _wait(reactor, player, player.durations[args.cue] + WAIT_MARGIN)
            error = getattr(player.speaker, "error", None)
        finally:
            player.close()
    finally:
        amp.close()
    if silent is not None:
        _warn(f"error: {args.cue} was not played: {silent}")
        return 1
    if error:
        _warn(f"error: playback failed: {error}")
        return 1
    print(f"played {args.cue} ({player.durations[args.cue] * 1000:.0f} ms) "
          f"on {type(player.speaker).__name__}")
    return 0


def silent_reason(speaker: object, backend: str, warnings: list[str]) -> str | None:
    """Why nothing can be heard from ``speaker``: None for a real device, and for the null
    backend when it was asked for by name (a dry run of the pack and the amp pin)."""
    if not isinstance(speaker, NullSpeaker) or backend == "null":
        return None
    if not warnings:
        return "no backend could play"
    return warnings[0].removeprefix("audio: ").removesuffix("; cues are silent") \
        .removesuffix(": no sound")


def cmd_render(args: argparse.Namespace) -> int:
    out = args.out or sounds_dir() / "default"
    with writing(out, "--out"):
        written = soundgen.render(output_dir(out, "--out"))
    print(f"wrote {len(written)} cues and the manifest to {out}")
    return 0


SIDES, BOTH = "sides", "both"
# The waveforms' colours by the heading of the row, left column first: Mild blue, Wild red,
# a cue of both sides grey.
SHEET_COLOURS = {SIDES: ("#1f4e79", "#8b1a1a"), BOTH: ("#4d4d4d", "#4d4d4d")}


def sheet_rows() -> list[tuple[str, tuple[str | None, str | None]]]:
    """The sound sheet's rows, each under its heading: a side's own cues in that side's
    column (``SIDES``: Mild left, Wild right), then the cues both sides play two a row
    (``BOTH``), never under a side's heading."""
    rows: list[tuple[str, tuple[str | None, str | None]]] = [
        (SIDES, (cues.press("mild", level), cues.press("wild", level)))
        for level in range(1, cues.LEVELS + 1)]
    rows.append((SIDES, (cues.bam("mild"), cues.bam("wild"))))
    rows.append((SIDES, (cues.flip("mild"), cues.flip("wild"))))
    common = list(cues.COMMON)
    for i in range(0, len(common), 2):
        rows.append((BOTH, (common[i], common[i + 1] if i + 1 < len(common) else None)))
    return rows


def cmd_sheet(args: argparse.Namespace) -> int:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
    except ImportError:
        _warn(PLOTS_HINT)
        return 2
    pack = _pack(args, _settings(args))
    output_dir(args.out.parent, "--out")  # before the plotting: fail in a moment
    layout = sheet_rows()
    rows = [pair for _, pair in layout]

    long_span = max(pack.durations.values())
    fig, axes = plt.subplots(len(rows), 4, figsize=(18, 1.7 * len(rows)),
                             gridspec_kw={"width_ratios": [1, 1.3, 1, 1.3]})
    for r, row in enumerate(rows):
        span = soundgen.MAX_PRESS if r < cues.LEVELS else long_span
        colour = SHEET_COLOURS[layout[r][0]]
        for c, cue in enumerate(row):
            wave_ax, spec_ax = axes[r][2 * c], axes[r][2 * c + 1]
            if cue is None:
                wave_ax.axis("off")
                spec_ax.axis("off")
                continue
            wav = read_wav(pack.files[cue])
            x = np.array(wav.samples(), dtype=float)[:: wav.channels] / 32768.0
            t = np.arange(len(x)) / wav.rate
            wave_ax.plot(t, x, linewidth=0.4, color=colour[c])
            wave_ax.set_xlim(0, span)
            wave_ax.set_ylim(-1, 1)
            wave_ax.set_title(f"{cue}  {wav.duration * 1000:.0f} ms", fontsize=9, loc="left")
            wave_ax.tick_params(labelsize=7)
            with np.errstate(divide="ignore"):  # digital silence has no decibels
                spec_ax.specgram(x, NFFT=256, Fs=wav.rate, noverlap=224, cmap="magma",
                                 vmin=-120, vmax=-20)
            spec_ax.set_xlim(0, span)
            spec_ax.set_ylim(0, 8000)
            spec_ax.tick_params(labelsize=7)
    axes[0][0].annotate("Mild", (0.5, 1.35), xycoords="axes fraction", ha="center",
                        fontsize=13, weight="bold")
    axes[0][2].annotate("Wild", (0.5, 1.35), xycoords="axes fraction", ha="center",
                        fontsize=13, weight="bold")

    fig.suptitle(f"Sound pack {pack.root.name}: waveform (s) and spectrogram (Hz, s); "
                 f"press rows share a {soundgen.MAX_PRESS * 1000:.0f} ms axis", fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.985))
    # The cues of both sides get a heading of their own, between their first row's title
    # and the row above, across both columns.
    first = next(r for r, (heading, _) in enumerate(layout) if heading == BOTH)
    top, above = axes[first][0].get_position().y1, axes[first - 1][0].get_position().y0
    fig.text(0.5, (top + above) / 2, "Both sides", ha="center", va="center", fontsize=13,
             weight="bold")
    try:
        with writing(args.out, "--out"):
            fig.savefig(args.out, dpi=80)
    finally:
        plt.close(fig)
    print(f"wrote {args.out}")
    return 0
