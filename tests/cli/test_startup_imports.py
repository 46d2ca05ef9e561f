"""`launcher run` (the Pi service) never loads the terminal-only libraries (rich, ...), nor
the web server's (aiohttp) while the web is off."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

TERMINAL_ONLY = ("rich", "prompt_toolkit", "matplotlib")
WEB_ONLY = ("aiohttp", "launcher.web")


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
    modules = _imported_modules("".join(log) + rest)
    assert not modules & set(WEB_ONLY), sorted(modules & set(WEB_ONLY))


def _imported_modules(importtime_log: str) -> set[str]:
    """Every module name in a ``-X importtime`` log."""
    return {line.rsplit("|", 1)[1].strip() for line in importtime_log.splitlines()
            if line.startswith("import time:") and line.count("|") == 2}


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


# What `launcher run` on a Pi must not load: it imports only what it runs (DESIGN.md).
NOT_ON_THE_PI = ("launcher.sim", "hal.sim", "hal.electrical", "hal.network", "hal.circuit_faults",
                 "hal.circuit_docs", "launcher.games",
                 "launcher.tools",
                 "launcher.cli.play", "launcher.cli.simulate", "launcher.cli.sounds",
                 "launcher.cli.doctor", "launcher.cli.console_client", "launcher.cli.pi",
                 "launcher.firmware.selftest", "gpiozero.pins.mock", "rich", "prompt_toolkit",
                 "numpy", "matplotlib",
                 # gpiozero binds entry_points at import; hal/entry_points.py defers them.
                 "importlib.metadata", "email")


def _loaded(names: set[str], prefixes: tuple[str, ...]) -> set[str]:
    return {n for n in names if n in prefixes or n.startswith(tuple(p + "." for p in prefixes))}


def test_run_on_a_pi_loads_only_what_it_runs(tmp_path: Path) -> None:
    master, slave = os.openpty()
    try:
        alsa = tmp_path / "alsa.conf"
        alsa.write_text("pcm.!default { type null }\n")  # a sound device that opens
        cfg = tmp_path / "launcher.toml"
        cfg.write_text(f'[console]\nport = "{os.ttyname(slave)}"\n'
                       f'[state]\npath = "{tmp_path / "state.json"}"\n[luck]\nseed = 11\n')
        out = tmp_path / "modules.txt"
        env = {**os.environ, "ALSA_CONFIG_PATH": str(alsa), "GPIOZERO_PIN_FACTORY": "",
               "NOTIFY_SOCKET": str(tmp_path / "notify.sock")}
        proc = subprocess.run([sys.executable, str(Path(__file__).with_name("run_on_fake_pi.py")),
                               str(out), str(cfg)], env=env, capture_output=True, text=True,
                              timeout=120)
    finally:
        os.close(master)
        os.close(slave)
    assert proc.returncode == 0, proc.stderr
    assert "started on lgpio" in proc.stderr and "luck seed 11" in proc.stderr, proc.stderr
    names = set(out.read_text().split())
    # The list is the Pi service's: its board, its firmware, its console.
    assert {"gpiozero.pins.lgpio", "launcher.firmware.app", "launcher.firmware.transport",
            "launcher.firmware.safestop", "serial"} <= names
    assert not _loaded(names, NOT_ON_THE_PI), sorted(_loaded(names, NOT_ON_THE_PI))


# What `launcher --help` must not load: everything a command imports when it runs.
NOT_FOR_HELP = ("launcher.core", "launcher.firmware", "launcher.sim", "launcher.games",
                "launcher.tools", "hal", "gpiozero", "serial", "tomllib", "logging", "rich",
                "prompt_toolkit", "numpy", "matplotlib")


def test_help_and_version_load_none_of_the_firmware() -> None:
    for flag in ("--help", "--version"):
        code = ("import sys\nfrom launcher.cli.main import main\n"
                f"try:\n    main([{flag!r}])\nexcept SystemExit:\n    pass\n"
                "sys.stderr.write('\\n'.join(sorted(sys.modules)))")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60, check=True)
        names = set(proc.stderr.split())
        assert "launcher.cli.main" in names and "argparse" in names, flag
        assert not _loaded(names, NOT_FOR_HELP), (flag, sorted(_loaded(names, NOT_FOR_HELP)))


def test_help_says_what_the_parser_with_every_module_loaded_says(monkeypatch) -> None:
    from launcher.cli.main import build_parser

    monkeypatch.setenv("COLUMNS", "100")
    full = build_parser().format_help()  # every verb's module imported and registered
    proc = subprocess.run([sys.executable, "-m", "launcher.cli.main", "--help"],
                          env={**os.environ, "COLUMNS": "100"}, capture_output=True, text=True,
                          timeout=60, check=True)
    assert proc.stdout == full
    assert "safe-stop" in full and "simulate" in full


def test_a_command_line_that_starts_with_its_verb_builds_that_verb_alone() -> None:
    from launcher.cli.main import build_parser

    for verb, argv in (("run", ["run", "--simulated", "--port", ""]),
                       ("tune", ["tune", "--config", "x.toml"]),
                       ("config", ["config", "check", "x.toml"])):
        parser = build_parser(verb, alone=True)
        assert list(_choices(parser)) == [verb]
        assert parser.parse_args(argv).command == verb
    # A verb that is not one (a typo) gets the whole parser, which names every verb.
    assert set(_choices(build_parser("runn", alone=True))) == set(_choices(build_parser()))


def test_help_before_the_verb_still_lists_every_verb() -> None:
    proc = subprocess.run([sys.executable, "-m", "launcher.cli.main", "-h", "run"],
                          capture_output=True, text=True, timeout=60, check=True)
    assert "simulate" in proc.stdout and "safe-stop" in proc.stdout
