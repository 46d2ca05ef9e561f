"""`launcher run` (the Pi service) never loads the terminal-only libraries (rich, ...)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

TERMINAL_ONLY = ("rich", "prompt_toolkit", "matplotlib")


def _imported(importtime_log: str) -> set[str]:
    """Top-level package names in a ``-X importtime`` log."""
    names = set()
    for line in importtime_log.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def test_run_loads_none_of_the_terminal_libraries(tmp_path: Path) -> None:
    alsa = tmp_path / "alsa.conf"
    alsa.write_text("pcm.!default { type null }\n")
    cfg = tmp_path / "launcher.toml"
    cfg.write_text(f'[board]\npin_factory = "mock"\n[state]\npath = "{tmp_path / "s.json"}"\n'
                   '[console]\nport = ""\n[luck]\nseed = 3\n')
    env = {**os.environ, "ALSA_CONFIG_PATH": str(alsa), "GPIOZERO_PIN_FACTORY": ""}
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "launcher.cli.main",
                             "run", "--config", str(cfg)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    log = []
    try:
        for line in proc.stderr:  # up to the line that says the firmware is up
            log.append(line)
            if "SIMULATED" in line:
                break
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    names = _imported("".join(log) + rest)
    assert "launcher" in names and "gpiozero" in names  # the log is what we think it is
    assert not names & set(TERMINAL_ONLY), sorted(names & set(TERMINAL_ONLY))


def test_the_terminal_verbs_parse_without_loading_them() -> None:
    for verb in ("play", "console", "simulate", "tune", "sounds"):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "launcher.cli.main",
                               verb, "--help"], capture_output=True, text=True, timeout=60,
                              check=True)
        assert not _imported(proc.stderr) & set(TERMINAL_ONLY), verb


def _choices(parser: object) -> dict[str, str]:
    sub = next(a for a in parser._actions if a.dest == "command")  # type: ignore[attr-defined]
    return {a.dest: a.help for a in sub._choices_actions}


def test_the_lazy_verbs_help_lines_are_the_ones_their_modules_register() -> None:
    from launcher.cli.main import LAZY_VERBS, build_parser

    full, lazy = _choices(build_parser()), _choices(build_parser(""))
    assert full == lazy
    assert set(LAZY_VERBS) <= set(full)


def test_help_and_run_load_no_verb_module_they_do_not_use() -> None:
    for argv, unwanted in ((["--help"], ("launcher.cli.simulate", "launcher.cli.sounds",
                                         "launcher.cli.doctor", "launcher.cli.console_client",
                                         "launcher.games")),
                           (["run", "--help"], ("launcher.cli.simulate", "launcher.games",
                                                "launcher.tools"))):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "launcher.cli.main",
                               *argv], capture_output=True, text=True, timeout=60, check=True)
        loaded = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
                  if line.startswith("import time:") and line.count("|") == 2}
        assert not {m for m in loaded if m.startswith(unwanted)}, argv
