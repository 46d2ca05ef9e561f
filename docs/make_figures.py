"""Regenerate the README's figures: the play screen and a `launcher tune` plot.

    .venv/bin/python docs/make_figures.py          # (or: make figures)

The play screen is `launcher play`'s own: its `Playground` (the firmware on the simulated
launcher, the console, the screen's event list) on a manual reactor with a fixed seed, sent
the screen's own keys (`play.KEYS`) and drawn by the same code as the live view, at 100x30,
exported by rich as SVG and as plain text (which a test compares with what this draws now).
The plot is `launcher tune --config docs/examples/wild-party.toml`'s shot-size plot; the
run's report.md is kept beside it as text, and a test compares that too.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from launcher.cli import play  # noqa: E402
from launcher.cli.main import main as launcher_main  # noqa: E402
from launcher.cli.play_screen import export  # noqa: E402
from launcher.core import config, machine  # noqa: E402
from launcher.core.reactor import ManualReactor  # noqa: E402

SEED = 11
SIZE = (100, 30)
TUNE_GAMES = 200
TUNE = ["tune", "--config", "docs/examples/wild-party.toml", "--games", str(TUNE_GAMES),
        "--seed", "1", "--no-progress"]
STEP = 0.05  # s of manual time a step while the firmware is busy


class ScriptReactor(ManualReactor):
    """The manual reactor with the one more verb the screen calls (`quit`, a reboot)."""

    stopped = False

    def stop(self) -> None:
        self.stopped = True


def _key(screen: Any, key: str) -> None:
    """One key as the live screen takes it: the screen's own handler if it has one, else its
    key table (`KEYS`, `r` reloads); then time runs until the unit is idle."""
    if hasattr(screen, "key"):
        screen.key(key)
    elif key == "r":
        screen.run_line("reload")
    else:
        screen.run_line(play.KEYS[key])
    reactor = screen.reactor
    reactor.advance(0.4)  # the button let go, the mash guard over
    for _ in range(600):  # a shot or a turn takes a few seconds at most
        if screen.app.machine.state not in (machine.SHOOTING, machine.ROTATING):
            break
        reactor.advance(STEP)


def play_session(seed: int = SEED, state: Path | None = None) -> Any:
    """Two shots on the Mild side, the lid opened fully (the cartridge turns to Wild) and
    closed, two presses: the live screen's snapshot afterwards."""
    settings = config.load(None)
    with tempfile.TemporaryDirectory() as tmp:
        # No sound device: the same screen on every machine (no "no sound device" footer).
        settings = replace(settings, state_path=state or Path(tmp) / "state.json",
                           audio=replace(settings.audio, backend="null"))
        real = play.RealReactor
        play.RealReactor = ScriptReactor  # type: ignore[misc,assignment]  # time by the script
        try:
            screen = play.Playground(settings, seed, None, io.StringIO(), live=True)
        finally:
            play.RealReactor = real  # type: ignore[misc]
        shots: list[int] = []
        screen.app.listeners.append(lambda kind, data: shots.append(1) if kind == "shot"
                                    else None)
        try:
            screen.app.start()
            screen.reload_cartridge()
            for _ in range(50):  # the hazard curve caps a dry streak at 4: two shots come soon
                _key(screen, " ")
                if len(shots) == 2:
                    break
            for k in "oc  ":
                _key(screen, k)
            return screen.snapshot()
        finally:
            screen.app.stop()
            screen.app.board.close()


def write_play(out: Path) -> tuple[Path, Path]:
    svg, txt = out / "play.svg", out / "play.txt"
    text = export(play_session(), *SIZE, svg=str(svg))
    txt.write_text("\n".join(line.rstrip() for line in text.splitlines()) + "\n")
    return svg, txt


def write_tune(out: Path) -> tuple[Path, Path]:
    """The tune run's shot-size plot, and its report.md as text (what a test compares)."""
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(REPO):
        if launcher_main([*TUNE, "--out", tmp]) != 0:
            raise SystemExit("launcher tune failed")
        target = out / "tune-shot-sizes.png"
        shutil.copyfile(Path(tmp) / "shot_sizes.png", target)
        report = out / "tune-report.md"
        shutil.copyfile(Path(tmp) / "report.md", report)
    return target, report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=REPO / "docs" / "img", help="folder")
    p.add_argument("--only", choices=("play", "tune"), help="one figure only")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.only in (None, "play"):
        for path in write_play(args.out):
            print(f"wrote {path}")
    if args.only in (None, "tune"):
        for path in write_tune(args.out):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
