"""Regenerate the README's figures: the play screen and a `launcher tune` plot.

    .venv/bin/python docs/make_figures.py          # (or: make figures)

The play screen is the real firmware on the simulated launcher (manual reactor, fixed
seed), driven through a short session and drawn by the same code as `launcher play`, at
100x30, exported by rich as SVG (and as plain text, which a test compares). The plot is
`launcher tune --config docs/examples/wild-party.toml`'s shot-size plot.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from launcher.cli.main import main as launcher_main  # noqa: E402
from launcher.cli.play_screen import export, shot_text, snapshot  # noqa: E402
from launcher.firmware.console import Console  # noqa: E402
from launcher.sim.rig import SimRig  # noqa: E402

SEED = 11
SIZE = (100, 30)
TUNE = ["tune", "--config", str(REPO / "docs" / "examples" / "wild-party.toml"),
        "--games", "200", "--seed", "1", "--no-progress"]


def play_session(seed: int = SEED) -> object:
    """Load, press until two shots came, flip to Wild, press twice: the screen's snapshot."""
    rig = SimRig(seed=seed)
    events: list[str] = []
    last = {"shot": "none yet"}

    def heard(kind: str, data: dict) -> None:
        if kind == "shot":
            last["shot"] = shot_text(data)

    console = Console(rig.app, sim=rig.sim, write=events.append)
    rig.app.listeners.append(heard)
    try:
        def run(line: str) -> None:
            events.append(f"> {line}")
            events.extend(console.handle_line(line))
            rig.settle()

        rig.sim.load(f"card {i}" for i in range(84))
        run("load 84")
        shots = 0
        for _ in range(50):  # the hazard curve caps a dry streak at 4: two shots come soon
            shots += bool(rig.press())  # press() returns the cards that came out
            if shots == 2:
                break
        rig.flip()
        rig.press()
        rig.press()
        run("status")
        return snapshot(rig.app, rig.sim, seed=seed, last_shot=last["shot"], events=events)
    finally:
        console.close()
        rig.close()


def write_play(out: Path) -> tuple[Path, Path]:
    svg, txt = out / "play.svg", out / "play.txt"
    text = export(play_session(), *SIZE, svg=str(svg))
    txt.write_text("\n".join(line.rstrip() for line in text.splitlines()) + "\n")
    return svg, txt


def write_tune(out: Path) -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        if launcher_main([*TUNE, "--out", tmp]) != 0:
            raise SystemExit("launcher tune failed")
        target = out / "tune-shot-sizes.png"
        shutil.copyfile(Path(tmp) / "shot_sizes.png", target)
    return target


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
        print(f"wrote {write_tune(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
