"""Every shell command in README.md, docs/*.md and sounds/README.md is run here, or listed as
skipped with the reason.

A command is a line of a ``sh``, ``console`` (after ``$ ``) or plain fenced block, or of an
indented block, or an inline code span, that starts with a program a user runs
(``PROGRAMS``). Each one runs in ``bash`` from a scratch folder that links to the checkout's
files, with the venv first on ``PATH`` and the state folder in the scratch folder, so
nothing is written to the user's home or to the checkout. Slow ones run at a small size
(``SMALL``: fewer games, shorter benchmarks; pytest commands collect their tests, which
proves the files and selections exist, the run itself being this suite's job). A
``console`` block's output lines must be what the command prints. The rest are skipped with
their reason (``SKIP``): a Raspberry Pi, root, a serial port, the suite itself.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "sounds" / "README.md"]
PROGRAMS = re.compile(r"^(\$ )?(?:[A-Z_]+=\S+ )*(launcher|\.venv/bin/\S+|python3?|pytest|make|"
                      r"printf|sudo|systemctl|journalctl|git|bash|time|cd)(\s|$)")


@dataclass(frozen=True)
class Command:
    """One command of a doc: where, what, and (console blocks) the output it shows."""

    where: str
    text: str
    output: str | None = None


def _strip(line: str) -> str:
    """A command without its trailing ``# comment`` (outside quotes)."""
    out, quote = [], ""
    for i, ch in enumerate(line):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] == " "):
            break
        out.append(ch)
    return "".join(out).strip()


def doc_commands(path: Path) -> list[Command]:
    """The commands of one doc, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    name = path.relative_to(REPO)
    found: list[Command] = []
    fence: str | None = None
    i = 0
    while i < len(lines):
        line, where = lines[i], f"{name}:{i + 1}"
        m = re.match(r"^\s*```(\S*)", line)
        if m:
            fence = None if fence is not None else m.group(1)
            i += 1
            continue
        if fence == "console" and line.startswith("$ "):
            j = i + 1
            while j < len(lines) and not lines[j].startswith(("$ ", "```")):
                j += 1
            found.append(Command(where, line[2:].strip(), "\n".join(lines[i + 1:j]) + "\n"))
            i = j
            continue
        indented = fence is None and line.startswith("    ") and not line.lstrip().startswith("-")
        if (fence in ("sh", "bash", "") or indented) and PROGRAMS.match(line.strip()):
            text = line.strip()
            while text.endswith("\\") and i + 1 < len(lines):  # a continued line
                i += 1
                text = text[:-1].rstrip() + " " + lines[i].strip()
            found.append(Command(where, _strip(text)))
        elif fence is None:
            for span in re.findall(r"`([^`]+)`", line):
                if PROGRAMS.match(span) and " " in span:
                    found.append(Command(where, span.strip()))
        i += 1
    return found


def all_commands() -> list[Command]:
    return [c for path in DOCS for c in doc_commands(path)]


# --- what each command needs -----------------------------------------------------------

# (pattern, reason): the first that matches skips the command.
SKIP: list[tuple[str, str]] = [
    (r"(^|\s)(\.\.\.|[A-Z]{1,5}\b(?!=)|\[|<)|\|\s*(play|render|sheet|is-active)\b",
     "a template: the capitals, `...` and `[...]` stand for the user's own values"),
    (r"^launcher (config check|console|tune|sounds play|safe-stop)$|^python -X importtime$",
     "names a command in the text, without the arguments it needs"),
    (r"/etc/launcher/sounds/mine",
     "names the pack folder the user is told to make"),
    (r"^(sudo |systemctl|journalctl)|/opt/launcher|systemd/install\.sh|^git clone|^cd uno-",
     "needs a Raspberry Pi with the launcher installed, and root"),
    (r"^launcher doctor( --keep)?$|^launcher (selftest --config|run)\b",
     "checks or drives a Raspberry Pi (off a Pi the doctor reports `not a Raspberry Pi`, and "
     "`run` runs until stopped); the doctor's fixtures run below and in tests/cli/test_doctor.py"),
    (r"/dev/pts/",
     "needs the pty of a running `launcher run --simulated`: "
     "tests/firmware/test_run_simulated.py starts one and runs the console and miniterm on it"),
    (r"/dev/tty|/dev/serial0|socket://|miniterm",
     "needs a serial port with a launcher on it (the console's tests run it on a pty)"),
    (r"^(time )?(\S+=\S+ )*make test( |$)|^bash \.ci/run|^make test-(slow|loaded)|"
     r"^time \.venv/bin/pytest -m slow$",
     "is the test suite this test is part of (or its slow tier, or the suite under load)"),
    (r"make test-kernel|\.ci/kernel/|-m kernel",
     "needs the QEMU virtual machine of the kernel tier (docs/kernel-tier.md)"),
    (r"^make clean(-state)?$",
     "removes the venv and caches of the clone (or the user's state folder) it runs in: "
     "tests/cli/test_newcomer.py runs both on a copy of the Makefile"),
    (r"^make (setup|play)$",
     "installs packages (apt, pip) before it runs; `make test` has run it already, and "
     "`launcher play` is run below"),
    (r"^make figures$|^make benchmarks$|^python -m bench( |$)",
     "rewrites files of the checkout (docs/img, docs/PERFORMANCE.md): the figures test makes "
     "them into a temporary folder, and tests/bench runs `python -m bench --quick`"),
    (r"^python -m bench\.(press|service|profile)\b",
     "a benchmark of `python -m bench`, which tests/bench/test_suite.py runs in its quick mode"),
    (r"blocks\.py --print gin-variants",
     "the command of a slow generated block: `make test-slow` runs it and compares "
     "(tests/docs/test_generated.py)"),
    (r"rules_at_scale\.py",
     "runs the state machine in chunks of 2,000 examples (minutes each); 200 examples of it run "
     "in tests/sim/test_machine_rules.py"),
    (r"^launcher sounds play",
     "plays a sound on the machine's speaker (the ALSA null device's line below runs it)"),
]

# (pattern, rewrite): the small size a slow command runs at here.
SMALL: list[tuple[str, object]] = [
    (r"^launcher (simulate|tune)\b", lambda c: _games(c, 3)),
    (r"-m bench\.games --peers", lambda c: _results_here(re.sub(
        r"--peers \d+ --seconds \S+ --slices \d+", "--peers 1 --seconds 0.2 --slices 1", c))),
    (r"-m bench\.games$", lambda c: c + " --seconds 0.1 --slices 1"),
    (r"-m bench\.console", lambda c: c + " --lines 200 --seconds 0.1"),
    (r"-m bench\.web --out", lambda c: _results_here(c + " --requests 200 --tries 5 "
                                                     "--clients 2")),
    (r"fault_injection\.py \d+", lambda c: _results_here(re.sub(r"\.py \d+", ".py 3", c))),
    (r"-m bench\.settings_walk --out", lambda c: _results_here(c)),
    (r"^(time )?(\S+=\S+ )*(\.venv/bin/)?pytest\b", lambda c: c + " --collect-only -q"),
    (r"^launcher sounds render$", lambda c: c + " --out rendered"),
]

# Files a command expects to find in the folder it runs from.
FILES = {"my.toml": "[luck.mild]\nhazard = [0.35, 0.45, 1.4, 1.0]\n"}
# Commands whose documented exit status is not 0.
STATUS = {"launcher config check my.toml": 2}


def _results_here(command: str) -> str:
    """``--out FILE`` keeps a run's figures: here in the scratch folder (the checkout's docs/
    is a link), so that a small run never replaces the figures the docs are rendered from."""
    return re.sub(r"--out \S+", "--out results.json", command)


def _games(command: str, n: int) -> str:
    if "--games" in command:
        return re.sub(r"--games \d+", f"--games {n}", command)
    return command + f" --games {n}"


def plan(command: Command) -> tuple[str, str]:
    """("skip", reason) or ("run", the command as it runs here)."""
    for pattern, reason in SKIP:
        if re.search(pattern, command.text):
            return "skip", reason
    text = command.text
    for pattern, rewrite in SMALL:
        if re.search(pattern, text):
            text = rewrite(text)  # type: ignore[operator]
    return "run", text


def _cases() -> list:
    seen: dict[str, Command] = {}
    cases = []
    for c in all_commands():
        key = f"{c.text}\0{c.output}"
        if key in seen:  # the same command again, elsewhere: run once
            continue
        seen[key] = c
        cases.append(pytest.param(c, id=f"{c.where} {c.text[:60]}"))
    return cases


def _checkout_state() -> str:
    """The checkout's changes against its commit (what a command must leave as it was)."""
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO,
                          capture_output=True, text=True, check=False).stdout + subprocess.run(
        ["git", "diff"], cwd=REPO, capture_output=True, text=True, check=False).stdout


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder that looks like the checkout (links to its files), for commands to run in."""
    root = tmp_path_factory.mktemp("checkout")
    for entry in REPO.iterdir():
        if entry.name == "docs":  # a copy: a command that writes a page writes this one
            shutil.copytree(entry, root / entry.name,
                            ignore=shutil.ignore_patterns("__pycache__"))
        elif entry.name not in (".git", ".pytest_cache", "tune-report"):
            (root / entry.name).symlink_to(entry)
    for name, text in FILES.items():
        (root / name).write_text(text)
    return root


@pytest.mark.parametrize("command", _cases())
def test_a_documented_command_runs(command: Command, scratch: Path) -> None:
    what, text = plan(command)
    if what == "skip":
        pytest.skip(text)
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
               XDG_STATE_HOME=str(scratch / "state"), COLUMNS="100")
    env.pop("GPIOZERO_PIN_FACTORY", None)
    before = _checkout_state()
    done = subprocess.run(["bash", "-c", text], cwd=scratch, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=600)
    assert _checkout_state() == before, f"{command.where}: `{text}` changed the checkout"
    status = STATUS.get(command.text, 0)
    assert done.returncode == status, (f"{command.where}: `{text}` exited {done.returncode}:\n"
                                       f"{done.stdout[-1500:]}\n{done.stderr[-1500:]}")
    if command.output is not None:
        assert done.stdout + done.stderr == command.output, (
            f"{command.where}: the doc shows another output for `{text}`")


def test_the_inventory_finds_the_commands_of_every_kind() -> None:
    texts = {c.text for c in all_commands()}
    assert "launcher config check my.toml" in texts  # a console block
    assert "make test" in texts  # a sh block
    assert "sudo systemctl stop launcher" in texts  # an indented block
    assert "launcher simulate --games 1000 --seed 1" in texts  # an inline span
    assert any(t.startswith("launcher console /dev/ttyUSB0 --baud 115200") and "--reply-wait"
               in t for t in texts)  # a continued line


def test_every_skip_and_size_rule_is_used() -> None:
    texts = [c.text for c in all_commands()]
    for pattern, _ in [*SKIP, *SMALL]:
        assert any(re.search(pattern, t) for t in texts), f"no doc command matches {pattern}"


def test_a_template_is_skipped_and_a_real_command_is_not() -> None:
    assert plan(Command("x", "launcher tune --config FILE"))[0] == "skip"
    assert plan(Command("x", "launcher simulate --game uno"))[1] == \
        "launcher simulate --game uno --games 3"
    assert plan(Command("x", "launcher simulate --games 1000 --seed 1"))[1] == \
        "launcher simulate --games 3 --seed 1"
    # A recorded run and a page's benchmark block write into the scratch folder, not the
    # checkout's docs/.
    assert plan(Command("x", "python -m bench.games --peers 5 --seconds 4 --slices 4 --out "
                        "docs/results/peers.json"))[1] == ("python -m bench.games --peers 1 "
                        "--seconds 0.2 --slices 1 --out results.json")
    assert plan(Command("x", "python tests/reliability/fault_injection.py 900 --out "
                        "docs/results/fault_injection.json"))[1] == \
        "python tests/reliability/fault_injection.py 3 --out results.json"


def test_every_test_a_page_names_exists() -> None:
    """A path like ``tests/x/test_y.py`` (or ``...::test_z``) in a page is a file (and a test
    in it) of this checkout: console.md and sounds/README.md once named tests that were not."""
    missing = []
    for page in DOCS:
        for m in re.finditer(r"(tests/[\w/.*-]+\.py)(::(\w+))?", page.read_text()):
            files = list(REPO.glob(m.group(1)))
            name = m.group(3)
            if not files or (name and not any(re.search(rf"def {name}\b", f.read_text())
                                              for f in files)):
                missing.append(f"{page.relative_to(REPO)}: {m.group(0)}")
    assert missing == []
