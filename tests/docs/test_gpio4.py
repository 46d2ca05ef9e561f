"""GPIO 4 is the max98357a overlay's SD pin without `no-sdmode`, and the Pi pulls it up at
power-on: no output of the firmware's is suggested there. `pins.rotator_in2`'s suggested pin
is GPIO 9 and the dead-man line's GPIO 10 (hal/circuit.py). The docs of the install and of
the doctor, the installer's own comments and the doctor's fixtures once said GPIO 4 was
rotator_in2's, and then the dead-man's."""

from __future__ import annotations

import re
from pathlib import Path

from launcher.core import config

REPO = Path(__file__).resolve().parents[2]
FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "systemd" / "README.md",
         REPO / "systemd" / "install.sh",
         *sorted((REPO / "tests" / "cli" / "fixtures" / "doctor").rglob("*.toml")),
         *sorted((REPO / "tests" / "cli" / "fixtures" / "doctor").rglob("config.txt"))]
ON_GPIO4 = re.compile(r"GPIO ?4\b|rotator_in2 = 4\b")


def test_nothing_gives_gpio_4_to_rotator_in2():
    for path in FILES:
        text = " ".join(path.read_text(encoding="utf-8").split())
        for sentence in re.split(r"(?<=[.;])\s|\s(?=#)|\|", text):
            if "rotator_in2" in sentence and ON_GPIO4.search(sentence):
                assert "no longer" in sentence, f"{path.relative_to(REPO)}: {sentence[:160]}"


def test_the_readme_suggests_the_pins_the_doctor_fixture_uses():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    suggested = dict(re.findall(r"^\| `(\w+)` \| -1 \(none; GPIO (\d+) suggested\)", readme,
                                re.M))
    assert suggested["rotator_in2"] == "9" and suggested["deadman"] == "10"
    pi5 = config.load(REPO / "tests/cli/fixtures/doctor/healthy-pi5/root/etc/launcher/"
                      "launcher.toml").pins
    assert (pi5.rotator_in2, pi5.deadman) == (9, 10)
