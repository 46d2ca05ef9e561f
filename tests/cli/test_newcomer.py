"""What a newcomer met in issue 44, each as a user meets it: the card count resumed, `make
play` ending with Ctrl-C's 130, one-line bad options, the words of the docs.

The programs run in their own processes; waits are for output to show up, with a generous
bound for a loaded machine, never a fixed sleep.
"""

from __future__ import annotations

import fcntl
import io
import os
import select
import shutil
import signal
import stat
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from launcher.core.store import Saved

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = [sys.executable, "-m", "launcher.cli.main"]
BOUND = 60.0  # s: the most a start may take on a loaded machine


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    conf = tmp_path / "alsa.conf"
    conf.write_text("pcm.!default { type null }\n")
    return {**os.environ, "ALSA_CONFIG_PATH": str(conf), "GPIOZERO_PIN_FACTORY": "",
            "XDG_STATE_HOME": str(tmp_path / "xdg"), **more}


def _play(tmp_path: Path, *args: str, script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LAUNCHER, "play", "--lines", *args], input=script,
                          capture_output=True, text=True, timeout=BOUND,
                          env=_env(tmp_path), check=False)


def test_a_resumed_session_keeps_the_card_count(tmp_path):
    """Quit at 74 cards: the next session resumed the side and escalation, and 84 cards."""
    state = tmp_path / "state.json"
    state.write_text(Saved(side="mild", dry_streak=1, inventory=74).to_json())
    resumed = _play(tmp_path, "--state", str(state), "--resume", script="status\n")
    assert resumed.returncode == 0, resumed.stderr
    assert "# event loaded cards=74" in resumed.stdout
    assert "inventory=74" in resumed.stdout and "escalation=1" in resumed.stdout
    # A fresh unit (the default for a script) starts full, as before.
    fresh = _play(tmp_path, "--state", str(state), script="status\n")
    assert "# event loaded cards=84" in fresh.stdout and "inventory=84" in fresh.stdout


def _on_a_terminal(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[int, bytes]:
    """Run ``argv`` with a pty as its controlling terminal (a person's shell: its own job);
    once play's screen shows, type Ctrl-C; the exit status a shell would see, the output."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))

    def own_terminal() -> None:  # in the child, after setsid: the pty becomes its terminal
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                            start_new_session=True, preexec_fn=own_terminal)
    os.close(slave)
    seen = b""
    typed = False
    deadline = time.monotonic() + BOUND
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # the other side has gone
                    break
                if not data:
                    break
                seen += data
            if not typed and b"SIMULATED BOARD" in seen:
                os.write(master, b"\x03")
                typed = True
        code = proc.wait(timeout=BOUND)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        os.close(master)
    assert typed, f"the screen never showed: {seen[-2000:]!r}"
    # A shell reports a child killed by signal N as 128 + N.
    return (128 - code if code < 0 else code), seen


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_ctrl_c_in_make_play_ends_make_with_130(tmp_path):
    pytest.importorskip("prompt_toolkit")
    pytest.importorskip("rich")
    venv = Path(sys.executable).parent.parent  # this venv: `make play` runs its launcher
    env = _env(tmp_path, TERM="xterm-256color", COLUMNS="", LINES="")
    env.pop("MAKEFLAGS", None)
    env.pop("MAKELEVEL", None)
    # -o: the venv is made already; make must not set it up again.
    status, seen = _on_a_terminal(["make", "-s", "play", f"VENV={venv}", "-o",
                                   f"{venv}/.installed-stamp"], env, ROOT)
    assert status == 130, seen[-2000:]
    # Alone, at a terminal, the program's own status is 130 too.
    alone, _ = _on_a_terminal([*LAUNCHER, "play", "--seed", "3"], env, tmp_path)
    assert alone == 130


@pytest.mark.parametrize(("argv", "line"), [
    (["play", "--bogus"], "launcher play: error: unrecognized arguments: --bogus "
                          "(`launcher play --help` says what it takes)"),
    (["run", "--simulated", "--bogus"], "launcher run: error: unrecognized arguments: --bogus "
                                        "(`launcher run --help` says what it takes)"),
    (["console", "/dev/null", "-x"], "launcher console: error: unrecognized arguments: -x "
                                     "(`launcher console --help` says what it takes)"),
    (["config", "check"], "launcher config check: error: the following arguments are "
                          "required: FILE"),
    (["config", "check", "a", "b"], "launcher config check: error: unrecognized arguments: b "
                                    "(`launcher config check --help` says what it takes)"),
    (["play", "--seed", "x"], "launcher play: error: argument --seed: not a whole number: 'x'"),
    (["--bogus"], "launcher: error: unrecognized arguments: --bogus "
                  "(`launcher --help` says what it takes)"),
])
def test_a_bad_option_is_one_line_naming_the_verb_and_the_option(capsys, argv, line):
    from launcher.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines() == [line]  # no 7-line usage before it


@pytest.mark.parametrize("live", [True, False])
def test_wait_holds_back_a_scripts_next_line_and_on_the_screen_says_it_holds_nothing(
        settings, tmp_path, live):
    """The README said `wait` worked only in line mode; on the screen it answered as if it
    had waited."""
    from dataclasses import replace

    from launcher.cli.play import Playground

    quiet = replace(settings, state_path=tmp_path / "s.json",
                    audio=replace(settings.audio, backend="null"))
    play = Playground(quiet, 1, None, io.StringIO(), live=live)
    try:
        held = play.run_line("wait 2")
        reloaded = play.run_line("reload")
        words = list(play.events) if live else play.out.getvalue().splitlines()
    finally:
        play.app.stop()
        play.app.board.close()
    assert reloaded == 0.0 and "ok reloaded the simulated cartridge" in words
    if live:
        assert held == 0.0
        assert "ok waiting=0 (on the screen time runs by itself; `wait 2` spaces the lines " \
               "of a script)" in words
    else:
        assert held == 2.0 and "ok waiting=2" in words


def test_the_benchmarks_run_from_the_repositorys_root_as_the_readme_says():
    readme = (ROOT / "README.md").read_text()
    assert "The suite runs from the\nrepository's root" in readme
    proc = subprocess.run([sys.executable, "-m", "bench", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=BOUND, check=False)
    assert proc.returncode == 0 and "--quick" in proc.stdout, proc.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_clean_removes_what_the_set_up_leaves_and_keeps_the_state_folder(tmp_path):
    clone = tmp_path / "clone"
    clone.mkdir()
    shutil.copy(ROOT / "Makefile", clone)
    (clone / "launcher" / "__pycache__").mkdir(parents=True)
    (clone / "launcher" / "app.py").write_text("")
    left = [".venv/bin", "uno_launcher.egg-info", ".import_linter_cache", "bench-report",
            ".pytest_cache", ".ruff_cache", ".hypothesis"]
    for name in left:
        (clone / name).mkdir(parents=True)
    state = tmp_path / "xdg" / "launcher"
    state.mkdir(parents=True)
    (state / "play-state.json").write_text("{}")
    (state / "console-history").write_text("status\n")
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "xdg")}
    for name in ("MAKEFLAGS", "PYTHON", "VENV"):  # `make test PYTHON=...` exports them
        env.pop(name, None)
    clean = subprocess.run(["make", "-s", "clean"], cwd=clone, env=env, capture_output=True,
                           text=True, timeout=BOUND, check=False)
    assert clean.returncode == 0, clean.stderr
    assert sorted(p.name for p in clone.iterdir()) == ["Makefile", "launcher"]
    assert [p.name for p in (clone / "launcher").iterdir()] == ["app.py"]
    assert f"kept {state} (make clean-state removes it)" in clean.stdout
    assert (state / "play-state.json").exists()  # yours, unless asked
    asked = subprocess.run(["make", "-s", "clean-state"], cwd=clone, env=env,
                           capture_output=True, text=True, timeout=BOUND, check=False)
    assert asked.returncode == 0, asked.stderr
    assert not state.exists()


def test_a_state_file_right_in_tmp_is_refused_with_the_fix(tmp_path, capsys):
    import tempfile

    from launcher.cli.main import main

    temp = Path(tempfile.gettempdir())
    assert main(["play", "--lines", "--state", str(temp / "x.json")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: --state = '{temp / 'x.json'}': is in {temp}, a folder "
                           "other users may write to")
    assert line.endswith(f"(mkdir -m 700 {temp / 'mine'})")


def test_an_unreadable_state_file_is_not_said_to_be_resumed(tmp_path):
    state = tmp_path / "state.json"
    state.write_text("{not json")
    proc = _play(tmp_path, "--state", str(state), "--resume", script="status\n")
    assert proc.returncode == 0, proc.stderr
    assert "starting from defaults" in proc.stderr
    first = proc.stdout.splitlines()[0]
    assert "resumed" not in first
    assert f"a fresh unit, as {state} could not be read (the warning says why)" in first


@pytest.mark.parametrize("fault", ["beam_blocked", "jam"])
def test_a_fault_shows_no_sleep_countdown_and_never_sleeps(rig, fault):
    """A beam_blocked fault showed `sleep in 297 s` and never slept; a jam fault showed `-`."""
    from launcher.core import machine as m

    rig.load([f"card {i}" for i in range(84)])
    assert rig.app.status()["sleep_in"] is not None  # ready: the countdown runs
    if fault == "jam":
        rig.sim.jam()
        while rig.state != m.FAULT:
            rig.press()
    else:
        rig.sim.stick("exit_beam", True)
        rig.advance(0)
        rig.sim.press()
        rig.advance(0)
    assert rig.app.machine.memory.fault == fault
    assert rig.app.status()["sleep_in"] is None
    rig.advance(rig.settings.timing.sleep_after + 1)
    assert rig.state == m.FAULT and rig.app.status()["sleep_in"] is None


def test_last_shot_says_how_a_jammed_or_stopped_shot_ended(settings, tmp_path):
    """"last shot" kept the shot before a jammed one."""
    from dataclasses import replace

    from launcher.cli.play import Playground

    quiet = replace(settings, state_path=tmp_path / "s.json",
                    audio=replace(settings.audio, backend="null"))
    play = Playground(quiet, 1, None, io.StringIO())
    try:
        play._event("shot", {"side": "mild", "cards": 2, "asked": 2})
        assert play.last_shot == "2 cards (mild)"
        play._event("shoot", {"side": "wild", "cards": 5})
        play.sim.ejected_total += 1  # one card out, then the next stays in the beam
        play._event("fault", {"code": "jam"})
        assert play.last_shot == "1 card (wild) of 5, then fault jam"
        play._event("shoot", {"side": "mild", "cards": 3})
        play._event("shot_aborted", {"side": "mild", "cards": 0, "asked": 3,
                                     "reason": "lid opened"})
        assert play.last_shot == "0 cards (mild) of 3, then lid opened"
        play._event("fault", {"code": "lid_sensor"})  # no shot under way: the last one stays
        assert play.last_shot == "0 cards (mild) of 3, then lid opened"
    finally:
        play.app.stop()
        play.app.board.close()


@pytest.mark.parametrize("mild", [False, True])
def test_the_tune_report_explains_its_rates_and_is_written_as_its_plots_are(
        capsys, tmp_path, mild):
    """Observed rates under configured and an unchanged Wild Press Your Luck rate went
    unexplained; report.md was 0600 beside 0644 plots."""
    from launcher.cli.main import main

    pytest.importorskip("matplotlib")
    cfg = tmp_path / "luck.toml"
    cfg.write_text("[luck.wild]\nhazard = [0.3, 1.0]\nsizes = [3, 4]\nweights = [1, 1]\n"
                   + ("[luck.mild]\nhazard = [0.5, 1.0]\nsizes = [1, 2]\nweights = [1, 1]\n"
                      if mild else ""))
    out = tmp_path / "t"
    old = os.umask(0o022)
    try:
        assert main(["tune", "--config", str(cfg), "--games", "4", "--seed", "1", "--jobs",
                     "1", "--no-progress", "--out", str(out)]) == 0
    finally:
        os.umask(old)
    capsys.readouterr()
    report = (out / "report.md").read_text()
    notes = report.split("## Notes", 1)[1].split("\n## ", 1)[0]
    assert "observed under configured because every flip starts a new dry streak" in notes
    assert "- Wild Press Your Luck runs that shot: the card is of the Mild side" in notes
    assert ("which this config changes." in notes) == mild
    assert ("differ by chance alone." in notes) == (not mild)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()}
    assert set(modes.values()) == {0o644}, modes


def test_a_simulated_service_keeps_few_pin_states_however_long_it_runs(tmp_path):
    """`launcher run` on the simulated board grew 320-330 KiB between its 1,000th and its
    10,000th press: every pin kept 200 state changes, and the pins that change once or twice
    a shot took 12,000 presses to fill theirs (python -m bench.service measures it)."""
    import random
    from dataclasses import replace

    from hal.sim import SimPin
    from launcher.core import config
    from launcher.core.reactor import ManualReactor
    from launcher.sim.unit import SERVICE_PIN_KEEP, simulated_app

    settings = replace(config.load(), state_path=tmp_path / "state.json")
    reactor = ManualReactor()
    app, sim = simulated_app(settings, reactor, random.Random(1), lambda text: None)
    app.start()
    try:
        sim.load(f"card {i}" for i in range(500))
        app.load(500)
        for _ in range(150):
            sim.press()
            reactor.advance(2.0)  # the press, its shot if any, the mash guard
        pins = [p for p in sim.factory.pins.values() if isinstance(p, SimPin)]
        changes = {p.info.name: len(p.states) for p in pins}
        assert app.machine.memory.counters["shots"] > 5
        assert max(changes.values()) == SERVICE_PIN_KEEP, changes  # full, and no more
    finally:
        app.stop()
        app.board.close()


def test_a_simulated_service_keeps_few_ejected_cards_however_many_it_shoots(tmp_path):
    """Its tray kept every card it ever shot (nobody picks a service's cards up): one
    string a card, for ever; 0.03 MiB of the 0.25 MiB that `launcher run` grew between its
    1,000th and 11,000th press. It keeps the newest, and counts them all for `inventory`."""
    import random
    from dataclasses import replace

    from launcher.core import config
    from launcher.core.reactor import ManualReactor
    from launcher.firmware.app_commands import register_app_commands
    from launcher.firmware.registry import Registry
    from launcher.sim.unit import SERVICE_KEEP, simulated_app

    settings = replace(config.load(), state_path=tmp_path / "state.json")
    reactor = ManualReactor()
    app, sim = simulated_app(settings, reactor, random.Random(1), lambda text: None)
    app.start()
    try:
        cards = 3 * SERVICE_KEEP
        sim.load(f"card {i}" for i in range(cards))
        app.load(cards)
        while sim.ejected_total < 2 * SERVICE_KEEP:
            sim.press()
            reactor.advance(2.0)
        shot = app.machine.memory.counters["cards_shot"]
        assert shot == sim.ejected_total == sim.in_tray > SERVICE_KEEP
        assert len(sim.tray) == SERVICE_KEEP  # the newest, and no more
        assert list(sim.tray) == list(sim.ejected)
        reg = Registry()
        register_app_commands(reg, app, sim, {})
        assert reg.dispatch("inventory", lambda spec: None).data["tray"] == shot
        assert len(sim.take()) == SERVICE_KEEP and sim.in_tray == 0 == len(sim.tray)
    finally:
        app.stop()
        app.board.close()
