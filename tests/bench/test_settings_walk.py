"""bench.settings_walk: its classifier, its layers, its tracer and its result, then one real
walk of ``launcher run --simulated`` over the console."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import threading
import tomllib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from launcher.core import config
from launcher.core.machine.settings import MachineSettings

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def walk(bench: Callable[[str], ModuleType]) -> ModuleType:
    return bench("settings_walk")


@pytest.fixture
def trace(bench: Callable[[str], ModuleType]) -> ModuleType:
    return bench("settings_trace")


def test_a_whole_settings_is_whole(trace: ModuleType) -> None:
    assert trace.classify(config.load(None)) == ("whole", "Settings")


def test_each_section_is_a_part_named_by_its_type(trace: ModuleType) -> None:
    s = config.load(None)
    sections = {"Pins": s.pins, "Luck": s.luck, "SideLuck": s.luck.wild, "Timing": s.timing,
                "Motor": s.motor, "Rotator": s.rotator, "Audio": s.audio,
                "Console": s.console, "Web": s.web, "Profile": s.profile,
                "MachineSettings": MachineSettings.of(s)}
    for name, value in sections.items():
        assert trace.classify(value) == ("part", name), name


def test_other_values_are_neither(trace: ModuleType) -> None:
    s = config.load(None)
    for value in (None, 7, "luck", s.state_path, s.pin_factory, s.timing.jam_timeout,
                  s.luck.mild.sizes, [s], {"settings": s}, config, config.Settings, object()):
        assert trace.classify(value) is None, value


def test_layers_low_to_high(trace: ModuleType) -> None:
    assert trace.layer("launcher.cli.run") == 5
    assert trace.layer("hal.sim") == 0
    assert trace.layer("hal") == 0
    assert trace.layer("launcher.firmware.app") == 2
    assert trace.layer("launcher.games.uno.engine") == 2
    assert trace.layer("launcher.core.machine.settings") == 1
    assert trace.layer("launcher.sim.unit") == trace.layer("launcher.web.server") == 3
    assert trace.layer("launcher.tools") == 4
    for outside in ("launcher", "halo", "launcher.corex", "bench.settings_walk", "threading"):
        assert trace.layer(outside) is None, outside


def test_the_layers_are_the_import_linter_contract_s(trace: ModuleType) -> None:
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c["layers"] for c in contracts["contracts"] if c["type"] == "layers")
    expected = {"hal": 0}
    for n, row in enumerate(reversed(layers), start=1):  # the contract lists them high first
        for name in row.split("|"):
            expected[name.strip()] = n
    assert dict(trace.LAYERS) == expected


def test_module_of_names_files_under_the_packages_only(trace: ModuleType, tmp_path: Path) -> None:
    roots = {"launcher": str(tmp_path / "launcher"), "hal": str(tmp_path / "hal")}
    assert trace.module_of(str(tmp_path / "launcher/cli/run.py"), roots) == "launcher.cli.run"
    assert trace.module_of(str(tmp_path / "launcher/core/__init__.py"), roots) == "launcher.core"
    assert trace.module_of(str(tmp_path / "hal/sim.py"), roots) == "hal.sim"
    assert trace.module_of(str(tmp_path / "halo/sim.py"), roots) is None
    assert trace.module_of("<string>", roots) is None


TRACE = {
    "python": "3.11.7",
    "packages": {},
    "exit": 0,
    "functions": [
        {"module": "launcher.cli.run", "qualname": "run_unit", "calls": 1,
         "kinds": {"whole": 1}, "sections": {"Settings": 1}},
        {"module": "launcher.firmware.app", "qualname": "build_app", "calls": 2,
         "kinds": {"whole": 2}, "sections": {"Settings": 2}},
        {"module": "launcher.firmware.inputs", "qualname": "Inputs.__init__", "calls": 1,
         "kinds": {"part": 1}, "sections": {"Timing": 1, "Pins": 1}},
        {"module": "hal.sim", "qualname": "SimLauncher.__init__", "calls": 3,
         "kinds": {"part": 3}, "sections": {"Pins": 3}},
        {"module": "launcher.sim.unit", "qualname": "console_extras.<locals>.selftest",
         "calls": 1, "kinds": {"whole": 1}, "sections": {"Settings": 1}},
    ],
    "climbs": [
        {"from": "launcher.firmware.sim_commands:selftest",
         "to": "launcher.sim.unit:console_extras.<locals>.selftest", "kind": "whole",
         "section": "Settings", "calls": 1},
        {"from": "hal.sim:SimLauncher.press", "to": "launcher.firmware.inputs:Inputs.pressed",
         "kind": "part", "section": "Timing", "calls": 4},
    ],
    "calls": {"whole": 4, "part": 4},
    "reads": [
        {"module": "launcher.firmware.app", "qualname": "build_app", "fields": ["motor"]},
        {"module": "launcher.firmware.session", "qualname": "Session.lasts",
         "fields": ["console"]},
    ],
}


def test_the_result_from_a_trace(walk: ModuleType) -> None:
    r = walk.build_result(TRACE, ["status", "press"], ["ok state=ready", "ok state=ready"])
    assert r["command"] == "python -m bench.settings_walk" and r["python"] == "3.11.7"
    assert r["lines"] == ["status", "press"] and r["answers"][1] == "ok state=ready"
    assert r["whole"] == {
        "modules": ["launcher.cli.run", "launcher.firmware.app", "launcher.sim.unit"],
        "functions": ["launcher.cli.run:run_unit", "launcher.firmware.app:build_app",
                      "launcher.sim.unit:console_extras.<locals>.selftest"]}
    assert r["parts"]["modules"] == ["hal.sim", "launcher.firmware.inputs"]
    assert r["parts"]["functions"] == ["hal.sim:SimLauncher.__init__",
                                       "launcher.firmware.inputs:Inputs.__init__"]
    assert r["parts"]["by_section"] == {"Pins": ["hal.sim", "launcher.firmware.inputs"],
                                        "Timing": ["launcher.firmware.inputs"]}
    assert r["modules_entered"] == 5
    assert r["climb_count"] == 2
    assert r["climbs"][0] == {"from": "hal.sim:SimLauncher.press",
                              "to": "launcher.firmware.inputs:Inputs.pressed",
                              "kind": "part", "section": "Timing"}
    assert r["calls"] == {"whole": 4, "part": 4}
    assert r["read"] == {"modules": ["launcher.firmware.app", "launcher.firmware.session"],
                         "functions": ["launcher.firmware.app:build_app",
                                       "launcher.firmware.session:Session.lasts"]}
    # build_app is the composition root; a session reading the whole is below the shell.
    assert walk.outside_shell(r) == ["launcher.firmware.session:Session.lasts"]
    json.dumps(r)  # it is JSON as it stands
    text = walk.summary(r)
    assert "the whole Settings entered 3 modules" in text and "5 modules in all" in text
    assert ("launcher.firmware.sim_commands:selftest -> launcher.sim.unit:console_extras."
            "<locals>.selftest (whole Settings)") in text
    assert "handed or read below the shell: 1\n  launcher.firmware.session:Session.lasts" in text


def test_the_shell_is_the_cli_the_roots_and_the_configurations_owners(walk: ModuleType
                                                                       ) -> None:
    for inside in ("launcher.cli.run:run_unit", "launcher.cli.paths:simulated_state",
                   "launcher.firmware.app:build_app", "launcher.core.config:settings_from_dict",
                   "launcher.firmware.live_config:LiveConfig.apply",
                   "launcher.core.machine.settings:MachineSettings.of"):
        assert walk.in_shell(inside), inside
    for below in ("launcher.firmware.app:Launcher.__init__", "launcher.firmware.app:build_apps",
                  "launcher.firmware.runner:run_firmware", "launcher.sim.rig:sim_build",
                  "launcher.clix:run", "hal.sim:SimLauncher.__init__"):
        assert not walk.in_shell(below), below


def test_a_run_is_kept_beside_the_others(walk: ModuleType, tmp_path: Path) -> None:
    r = walk.build_result(TRACE, ["status"], ["ok"])
    path = tmp_path / "walk.json"
    assert walk.kept(path, "before", r) == {"before": r}  # no file yet
    path.write_text(json.dumps({"before": r}))
    both = walk.kept(path, "now", {**r, "climb_count": 0})
    assert set(both) == {"before", "now"} and both["before"] == r
    path.write_text('{"not": "a walk"}')  # another file: started afresh
    assert walk.kept(path, "now", r) == {"now": r}


def test_the_table_shows_each_run_s_figures(walk: ModuleType) -> None:
    r = walk.build_result(TRACE, ["status"], ["ok"])
    before = {**r, "commit": "aaaa111", "date": "2026-12-07 00:00 UTC"}
    now = {**r, "commit": "bbbb222", "date": "2026-12-07 01:00 UTC",
           "read": {"modules": ["launcher.firmware.app"],
                    "functions": ["launcher.firmware.app:build_app"]}}
    text = walk.markdown({"now": now, "before": before})
    assert "| | before (aaaa111) | now (bbbb222) |" in text  # before first, whatever order
    rows = {line.split(" | ")[0]: line.split(" | ")[1:] for line in text.splitlines()
            if line.startswith("| ") and not line.startswith("| |")}
    assert rows["| functions below the shell handed, or reading, a whole `Settings`"] == \
        ["1", "0 |"]
    assert rows["| modules that read a whole `Settings`' fields"] == ["2", "1 |"]
    assert rows["| modules entered by either, in all"] == ["5", "5 |"]
    assert rows["| calls from a lower layer to a higher one carrying either"] == ["2", "2 |"]
    assert "Below the shell, before: `launcher.firmware.session:Session.lasts`." in text
    assert "Below the shell, now: none." in text
    assert "on 2026-12-07 01:00 UTC (commit bbbb222" in text


LOW = """
def call(f, *args, **named):
    return f(*args, **named)
"""

HIGH = """
def take(timing, *more, **named):
    return timing


def read(settings):
    return settings.luck, settings.pins


def steps(timing):
    yield timing
    yield timing
    yield timing
"""


def _load(path: Path, text: str) -> ModuleType:
    """A module from a file of its own, under a name no other test uses (the tracer names it
    by its file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"settings_walk_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tracer_sees_other_threads_climbs_and_no_resumptions(trace: ModuleType,
                                                                 tmp_path: Path) -> None:
    low = _load(tmp_path / "hal" / "low.py", LOW)
    high = _load(tmp_path / "launcher" / "firmware" / "high.py", HIGH)
    roots = {p: os.path.realpath(tmp_path / p) for p in ("launcher", "hal")}
    tracer = trace.Tracer(roots, trace.Classifier())
    s = config.load(None)
    done: list[Any] = []

    def on_a_thread() -> None:
        done.append(low.call(high.take, s.timing, s.pins, named=s))

    tracer.install()
    try:
        thread = threading.Thread(target=on_a_thread)
        thread.start()
        thread.join()
        stepped = list(high.steps(s.timing))
        high.read(s)
    finally:
        tracer.uninstall()
    s.luck  # noqa: B018  # read after: not recorded, and Settings reads as it did
    assert "__getattribute__" not in vars(config.Settings)
    assert done == [s.timing] and len(stepped) == 3
    t = tracer.trace(0)
    functions = {(f["module"], f["qualname"]): f for f in t["functions"]}
    # *args and **kwargs, one level deep, on the caller's side and the callee's.
    for name in (("hal.low", "call"), ("launcher.firmware.high", "take")):
        assert functions[name]["kinds"] == {"whole": 1, "part": 1}, name
        assert functions[name]["sections"] == {"Timing": 1, "Pins": 1, "Settings": 1}, name
    # A generator is called once; its resumptions are not calls.
    assert functions[("launcher.firmware.high", "steps")]["calls"] == 1
    assert t["calls"] == {"whole": 3, "part": 3}
    # Who took the whole apart, field by field (the test's own reads are outside).
    assert t["reads"] == [{"module": "launcher.firmware.high", "qualname": "read",
                           "fields": ["luck", "pins"]}]
    # hal (0) called the firmware (2): a climb per value it carried; the test's own calls
    # come from outside the layers and are none.
    assert sorted((c["from"], c["to"], c["section"]) for c in t["climbs"]) == [
        ("hal.low:call", "launcher.firmware.high:take", section)
        for section in ("Pins", "Settings", "Timing")]
    assert sys.getprofile() is None and threading.getprofile() is None


def test_the_walk_runs_the_launcher_and_answers_every_line(walk: ModuleType,
                                                           tmp_path: Path) -> None:
    out = tmp_path / "walk.json"
    proc = subprocess.run([sys.executable, "-m", "bench.settings_walk", "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=500)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(out.read_text())["now"]  # kept under its label
    lines, answers = r["lines"], r["answers"]
    assert len(answers) == len(lines) and "press" in lines and "selftest" in lines
    assert all(a.startswith(("ok", "error")) for a in answers), answers
    assert not [a for a in answers if a.startswith("error internal")], answers
    assert answers[lines.index("press")].startswith("ok"), answers
    # The shell took the whole Settings; its sections reached the firmware.
    assert "launcher.cli.run" in r["whole"]["modules"]
    assert "launcher.cli.run:run_unit" in r["whole"]["functions"]
    assert any(m.startswith("launcher.firmware.") for m in r["parts"]["modules"]), r["parts"]
    assert r["calls"]["whole"] > 0 and r["calls"]["part"] > 0
    assert r["modules_entered"] == len(set(r["whole"]["modules"]) | set(r["parts"]["modules"]))
    assert r["climb_count"] == len(r["climbs"])
    assert "the whole Settings entered" in proc.stdout and "climbs" in proc.stdout
    # The rule (docs/ARCHITECTURE.md): below the shell nothing is handed, or reads, a whole
    # Settings, and at most 4 calls climb the layers with configuration. On the code the
    # review read (a61010e) 14 functions below the shell did.
    assert walk.outside_shell(r) == [], walk.outside_shell(r)
    assert r["climb_count"] <= 4, r["climbs"]
    assert "launcher.cli.run:_run_simulated" in r["read"]["functions"]
