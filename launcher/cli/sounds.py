"""``launcher sounds list|play|render|sheet``: look at, listen to and rebuild sound packs."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from hal.audio import NullSpeaker, read_wav
from launcher.cli.paths import output_dir, writing
from launcher.core import config, cues
from launcher.core.reactor import NEVER, RealReactor
from launcher.firmware.sound import CuePlayer, Pack, build_cue_player, load_pack, sounds_dir
from launcher.tools import soundgen

PLOTS_HINT = "launcher sounds sheet needs matplotlib and numpy: pip install 'uno-launcher[plots]'"
WAIT_MARGIN = 2.0  # seconds a play may overrun its cue's length before we give up waiting


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("sounds", help="list, play, render or plot the sound cues")
    sub = parser.add_subparsers(dest="sounds_command", metavar="COMMAND", required=True)

    def pack_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--config", metavar="FILE",
                       help="TOML config (default: built-in defaults)")
        p.add_argument("--pack", help="a pack folder name under sounds/ or a path "
                       "(default: audio.pack of the config)")

    p = sub.add_parser("list", help="every cue of the pack, with its length and file")
    pack_options(p)
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("play", help="play one cue on the configured device and wait for it")
    p.add_argument("cue", help="a cue name (see `launcher sounds list`)")
    pack_options(p)
    p.add_argument("--backend", choices=config.AUDIO_BACKENDS,
                   help="audio backend (default: audio.backend of the config)")
    p.set_defaults(func=cmd_play)

    p = sub.add_parser("render", help="rebuild the default pack's WAV files from the generator")
    p.add_argument("--out", type=Path, help="output folder (default: sounds/default)")
    p.set_defaults(func=cmd_render)

    p = sub.add_parser("sheet", help="a PNG of every cue's waveform and spectrogram")
    p.add_argument("--out", type=Path, default=Path("sounds-sheet.png"), help="PNG file")
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
    try:
        player = build_cue_player(settings, amp, reactor, warnings.append)
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
    rows: list[tuple[str | None, ...]] = []
    for level in range(1, cues.LEVELS + 1):
        rows.append((cues.press("mild", level), cues.press("wild", level)))
    rows.append((cues.bam("mild"), cues.bam("wild")))
    rows.append((cues.flip("mild"), cues.flip("wild")))
    common = list(cues.COMMON)
    while common:
        rows.append((common.pop(0), common.pop(0) if common else None))

    long_span = max(pack.durations.values())
    fig, axes = plt.subplots(len(rows), 4, figsize=(18, 1.7 * len(rows)),
                             gridspec_kw={"width_ratios": [1, 1.3, 1, 1.3]})
    for r, row in enumerate(rows):
        span = soundgen.MAX_PRESS if r < cues.LEVELS else long_span
        for c, cue in enumerate(row):
            wave_ax, spec_ax = axes[r][2 * c], axes[r][2 * c + 1]
            if cue is None:
                wave_ax.axis("off")
                spec_ax.axis("off")
                continue
            wav = read_wav(pack.files[cue])
            x = np.array(wav.samples(), dtype=float)[:: wav.channels] / 32768.0
            t = np.arange(len(x)) / wav.rate
            wave_ax.plot(t, x, linewidth=0.4, color="#1f4e79" if "wild" not in cue
                         else "#8b1a1a")
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
    try:
        with writing(args.out, "--out"):
            fig.savefig(args.out, dpi=80)
    finally:
        plt.close(fig)
    print(f"wrote {args.out}")
    return 0
