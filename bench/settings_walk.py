"""Where the configuration travels at run time: which functions receive the whole ``Settings``,
which receive one of its sections, and which of those calls climb the layers.

``python -m bench.settings_walk [--out FILE [--label NAME]] [--timeout S]``

``--out docs/results/settings_walk.json`` keeps the run under its label (``now``; the
other labels the file holds stay), and docs/blocks.py renders ARCHITECTURE.md's table from
it (``markdown``): ``before`` is the same command run on the code of the last review.

The design rule it measures: only the shell (``launcher/cli/*`` and the composition root
that builds a unit) handles a whole ``Settings``; below it, each part receives only its own
section (``Pins``, ``Luck`` and its ``SideLuck``s, ``Timing``, ``Motor``, ``Rotator``,
``Audio``, the config's ``Console``, ``Web``, ``Profile``, or a ``MachineSettings``).

It runs the path a user runs, as a real process. A child process
(``python -m bench.settings_walk --child TRACE.json -- ARGS...``) installs a profiler on every
thread (``sys.setprofile`` and ``threading.setprofile``) and calls the ``launcher`` command's
own entry point in-process with ``run --simulated --state DIR/state.json --seed 7``. This
process reads the console's pty path from the child's first line of output, opens the pty and
sends a fixed script of console lines (``LINES``), each answered before the next is sent;
then it stops the child with SIGTERM, as systemd stops the service, and reads the trace the
child wrote as it returned.

For each call of a function in ``launcher/`` or ``hal/`` the profiler
(bench/settings_trace.py) classifies the function's parameters (``*args`` and ``**kwargs``
one level deep): a whole ``Settings`` is "whole", a section is "part". A call carrying
either is a CLIMB when its caller's module sits in a lower layer than the callee's
(``LAYERS``: the import-linter layers of pyproject.toml, with ``hal`` below them all). A
generator's or coroutine's resumption is not a call. Every read of a whole ``Settings``'
field is recorded too, with the function that read it: where the configuration is taken
apart (``Settings.__getattribute__`` is watched in the child).

Whoever hands on or reads a whole ``Settings`` outside ``SHELL`` (the CLI, the composition
roots and the configuration's own owners) breaks the rule; the summary names each, and
tests/bench/test_settings_walk.py fails on any.

The result is one JSON object (``--out FILE``, written whole or not at all; without it,
standard output) and a summary (standard error; standard output with ``--out``). The exit
status is 0 when the walk ran to its end (whatever the answers were), 1 when it did not: the
child failed, or a step outlasted its bound, and the message says which, with the child's
standard error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import tty
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.settings_trace import PACKAGES, child, name

ROOT = Path(__file__).resolve().parent.parent
COMMAND = "python -m bench.settings_walk"
SEED = 7

# The console script: each line touches a path where the configuration is used.
LINES = (
    "status",
    "pins",
    "luck show",
    "press",
    "status",
    "config get luck.mild.sizes",
    "config set console.debug_idle_s 120",
    "debug on",
    "config set timing.jam_timeout_ms 900",
    "motor run 100",
    "debug off",
    "session new",
    "doctor",
    "selftest",
    "seed 5",
    "profile",
    "status",
)

# Who may handle a whole Settings (be handed it, or read its fields): the shell, a
# "module:" prefix standing for every function of a module. The CLI reads, checks and
# overrides it; the composition roots take it apart (build_app a unit, simulated_app the
# simulated board under it, the self-test's own two roots, MachineSettings.of the machine's
# part); the configuration's owners make and check one from the file's values (config,
# places, the running configuration).
SHELL = (
    "launcher.cli.",
    "launcher.firmware.app:build_app",
    "launcher.sim.unit:simulated_app",
    "launcher.sim.unit:console_extras.<locals>.selftest",
    "launcher.sim.selftest:run_auto",
    "launcher.sim.selftest:simulated_unit",
    "launcher.firmware.selftest:run_on_hardware",
    "launcher.core.machine.settings:MachineSettings.of",
    "launcher.core.config:",
    "launcher.firmware.places:",
    "launcher.firmware.live_config:",
)

# Bounds, generous for a loaded 2-core machine (the profiler slows the child several times).
START_WAIT = 120.0  # s: the child's first line (the pty's path), then the console's banner
REPLY_WAIT = 60.0  # s: one line's final answer
STOP_WAIT = 60.0  # s: the child's exit after SIGTERM, with the trace written
TOTAL_WAIT = 300.0  # s: the whole conversation, --timeout
BANNER = "# launcher "  # the console's greeting to a new client
FINALS = ("ok", "error")  # the first word of a reply's final line


class WalkError(RuntimeError):
    """The walk did not run to its end; the message says where, with the child's stderr."""


# --- the result ------------------------------------------------------------------------


def build_result(trace: Mapping[str, Any], lines: Sequence[str],
                 answers: Sequence[str]) -> dict[str, Any]:
    """The bench's result from a child's trace (``Tracer.trace``), the script and each
    line's final answer."""
    modules: dict[str, set[str]] = {"whole": set(), "part": set()}
    functions: dict[str, set[str]] = {"whole": set(), "part": set()}
    by_section: dict[str, set[str]] = {}
    for f in trace["functions"]:
        for kind in f["kinds"]:
            modules[kind].add(f["module"])
            functions[kind].add(name(f["module"], f["qualname"]))
        for section in f["sections"]:
            if section != "Settings":
                by_section.setdefault(section, set()).add(f["module"])
    climbs = sorted({(c["from"], c["to"], c["kind"], c["section"]) for c in trace["climbs"]})
    reads = {name(r["module"], r["qualname"]): r for r in trace.get("reads", ())}
    return {
        "command": COMMAND,
        "python": trace["python"],
        "lines": list(lines),
        "answers": list(answers),
        "whole": {"modules": sorted(modules["whole"]), "functions": sorted(functions["whole"])},
        "read": {"modules": sorted({r["module"] for r in reads.values()}),
                 "functions": sorted(reads)},
        "parts": {"modules": sorted(modules["part"]), "functions": sorted(functions["part"]),
                  "by_section": {s: sorted(m) for s, m in sorted(by_section.items())}},
        "modules_entered": len(modules["whole"] | modules["part"]),
        "climbs": [{"from": a, "to": b, "kind": k, "section": s} for a, b, k, s in climbs],
        "climb_count": len(climbs),
        "calls": {"whole": trace["calls"].get("whole", 0),
                  "part": trace["calls"].get("part", 0)},
    }


def in_shell(function: str) -> bool:
    """Whether ``module:qualname`` may handle a whole Settings (``SHELL``)."""
    return any(function.startswith(s) if s.endswith((".", ":")) else function == s
               for s in SHELL)


def outside_shell(result: Mapping[str, Any]) -> list[str]:
    """The functions below the shell that were handed, or read, a whole Settings."""
    handled = {*result["whole"]["functions"], *result["read"]["functions"]}
    return sorted(f for f in handled if not in_shell(f))


def summary(result: Mapping[str, Any]) -> str:
    """A few lines for a person: where the whole went, where the parts went, the climbs."""
    whole, parts = result["whole"]["modules"], result["parts"]["modules"]
    out = [f"{COMMAND}: {len(result['lines'])} console lines answered"
           + (f" in {result['wall_s']} s" if "wall_s" in result else "")
           + f" (Python {result['python']})",
           f"the whole Settings entered {len(whole)} modules "
           f"({result['calls']['whole']} calls): {', '.join(whole) or 'none'}",
           f"its fields were read in {len(result['read']['modules'])} modules: "
           f"{', '.join(result['read']['modules']) or 'none'}",
           f"its sections entered {len(parts)} modules ({result['calls']['part']} calls); "
           f"{result['modules_entered']} modules in all",
           f"climbs (a lower layer calling a higher one with configuration): "
           f"{result['climb_count']}"]
    out += [f"  {c['from']} -> {c['to']} ({c['kind']} {c['section']})"
            for c in result["climbs"]]
    below = outside_shell(result)
    out.append(f"handed or read below the shell: {len(below)}")
    out += [f"  {f}" for f in below]
    return "\n".join(out)


# --- the parent: the child, its console and the script -----------------------------------


def launcher_args(state: Path) -> list[str]:
    """The command line the child gives the launcher."""
    return ["run", "--simulated", "--state", str(state), "--seed", str(SEED)]


class Deadline:
    """The bound on the whole walk, and on each step within it."""

    def __init__(self, total: float) -> None:
        self.total = total
        self.end = time.monotonic() + total

    def step(self, seconds: float) -> tuple[float, str]:
        """When a step of at most ``seconds`` must end (the whole's end if sooner), and that
        bound in words for its message."""
        now = time.monotonic()
        if now + seconds <= self.end:
            return now + seconds, f"{seconds:g} s"
        return self.end, f"the walk's {self.total:g} s (--timeout)"


class ConsoleClient:
    """This end of the launcher's pty: send a line, read until its final answer."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self.fd)
        self._buf = b""
        self.seen: list[str] = []  # every line read, for a failure's message

    def _line(self, bound: tuple[float, str], waiting_for: str) -> str:
        end, within = bound
        while b"\n" not in self._buf:
            left = end - time.monotonic()
            if left <= 0:
                raise WalkError(f"no {waiting_for} within {within}; the console's last "
                                f"lines: {self.seen[-5:]}")
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError as exc:  # EIO: the launcher closed its end
                    raise WalkError(f"the console closed while waiting for {waiting_for} "
                                    f"({exc})") from None
                if not chunk:
                    raise WalkError(f"the console closed while waiting for {waiting_for}")
                self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        text = line.rstrip(b"\r").decode("utf-8", "replace")
        self.seen.append(text)
        return text

    def banner(self, deadline: Deadline) -> str:
        bound = deadline.step(START_WAIT)
        while True:
            line = self._line(bound, "banner")
            if line.startswith(BANNER):
                return line

    def ask(self, line: str, deadline: Deadline) -> str:
        """Send ``line``; its final answer (info and event lines before it are skipped)."""
        data = line.encode() + b"\r\n"
        while data:
            data = data[os.write(self.fd, data):]
        bound = deadline.step(REPLY_WAIT)
        while True:
            got = self._line(bound, f"answer to {line!r}")
            if got.split(" ", 1)[0] in FINALS:
                return got

    def close(self) -> None:
        os.close(self.fd)


def _first_line(proc: subprocess.Popen[bytes], deadline: Deadline) -> str:
    """The child's first line of standard output (the launcher prints its pty's path)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buf = b""
    end, within = deadline.step(START_WAIT)
    while b"\n" not in buf:
        left = end - time.monotonic()
        if left <= 0:
            raise WalkError(f"the launcher printed no pty path within {within}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                raise WalkError("the launcher ended before printing its pty path")
            buf += chunk
    return buf.split(b"\n", 1)[0].decode().strip()


def _child_env() -> dict[str, str]:
    """This environment, with this checkout first on the path and nothing that would point
    the launcher at a service manager or another pin factory."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS")
           and not k.startswith(("GPIOZERO_", "LAUNCHER_"))}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def _tail(path: Path, chars: int = 4000) -> str:
    with contextlib.suppress(OSError):
        text = path.read_text(errors="replace")
        return text[-chars:] or "(empty)"
    return "(unreadable)"


def _stop(proc: subprocess.Popen[bytes], wait: float) -> bool:
    """SIGTERM, then up to ``wait`` seconds; killed if it is still running. True if it
    ended on the SIGTERM."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.communicate(timeout=wait)
        return True
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return False


def walk(total: float = TOTAL_WAIT) -> dict[str, Any]:
    """Run the child, talk to its console, stop it; the result (``build_result``)."""
    started = time.monotonic()
    deadline = Deadline(total)
    with tempfile.TemporaryDirectory(prefix="settings-walk-") as folder:
        tmp = Path(folder)
        trace_path, errors = tmp / "trace.json", tmp / "child.stderr"
        cmd = [sys.executable, "-m", "bench.settings_walk", "--child", str(trace_path), "--",
               *launcher_args(tmp / "state.json")]
        with errors.open("wb") as err:
            proc = subprocess.Popen(cmd, cwd=ROOT, env=_child_env(), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=err, bufsize=0)
        answers: list[str] = []
        try:
            try:
                client = ConsoleClient(_first_line(proc, deadline))
            except OSError as exc:
                raise WalkError(f"the pty did not open: {exc}") from None
            try:
                client.banner(deadline)
                answers.extend(client.ask(line, deadline) for line in LINES)
            finally:
                client.close()
        except BaseException as exc:
            _stop(proc, 10.0)
            if isinstance(exc, WalkError):
                raise WalkError(f"{exc}\nthe child's stderr:\n{_tail(errors)}") from None
            raise
        if not _stop(proc, STOP_WAIT):
            raise WalkError(f"the launcher did not stop within {STOP_WAIT:.0f} s of SIGTERM "
                            f"(killed)\nthe child's stderr:\n{_tail(errors)}")
        if proc.returncode != 0 or not trace_path.exists():
            raise WalkError(f"the child exited {proc.returncode}"
                            f"{'' if trace_path.exists() else ' without a trace'}\n"
                            f"the child's stderr:\n{_tail(errors)}")
        trace = json.loads(trace_path.read_text())
    # The trace must be of this checkout's code, not an installed copy elsewhere.
    wanted = {p: os.path.realpath(ROOT / p) for p in PACKAGES}
    if trace["packages"] != wanted:
        raise WalkError(f"the child ran {trace['packages']}, not this checkout's {wanted}")
    result = build_result(trace, LINES, answers)
    result["wall_s"] = round(time.monotonic() - started, 1)
    result["commit"] = _commit()
    result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return result


def _commit() -> str:
    """This checkout's commit, short (``unknown`` outside git)."""
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                             capture_output=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() or "unknown"


def kept(path: Path, label: str, result: Mapping[str, Any]) -> dict[str, Any]:
    """What ``path`` holds with ``result`` under ``label``: its other labels kept, a file
    that is missing or not a walk's results started afresh."""
    runs: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        old = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(old, dict) and all(isinstance(r, dict) and "whole" in r
                                         for r in old.values()):
            runs = old
    runs[label] = dict(result)
    return runs


def _row(r: Mapping[str, Any]) -> dict[str, Any]:
    return {"below": len(outside_shell(r)), "whole": len(r["whole"]["modules"]),
            "read": len(r["read"]["modules"]), "parts": len(r["parts"]["modules"]),
            "all": r["modules_entered"], "climbs": r["climb_count"]}


ROWS = (
    ("below", "functions below the shell handed, or reading, a whole `Settings`"),
    ("whole", "modules a whole `Settings` was handed to"),
    ("read", "modules that read a whole `Settings`' fields"),
    ("parts", "modules a section was handed to"),
    ("all", "modules entered by either, in all"),
    ("climbs", "calls from a lower layer to a higher one carrying either"),
)


def markdown(runs: Mapping[str, Mapping[str, Any]]) -> str:
    """ARCHITECTURE.md's table of the kept runs (docs/results/settings_walk.json): each
    label a column, ``before`` first, then what was handled below the shell and the climbs."""
    labels = sorted(runs, key=lambda k: (k != "before", k))
    now = runs[labels[-1]]
    cells = {k: _row(runs[k]) for k in labels}
    lines = [
        f"Measured by `{COMMAND} --out docs/results/settings_walk.json` on {now['date']} "
        f"(commit {now['commit']}, Python {now['python']}; {len(now['lines'])} console "
        "lines: " + ", ".join(f"`{line}`" for line in now["lines"]) + "); "
        + ("`before` is the same command, with `--label before`, on the code the review "
           "read. " if "before" in runs else "")
        + "Kept in `docs/results/settings_walk.json`, from which `docs/blocks.py` renders "
        "this table.",
        "",
        "| | " + " | ".join(f"{k} ({runs[k]['commit']})" for k in labels) + " |",
        "|---|" + "---|" * len(labels),
        *(f"| {text} | " + " | ".join(str(cells[k][key]) for k in labels) + " |"
          for key, text in ROWS),
        "",
    ]
    for k in labels:
        below = outside_shell(runs[k])
        lines.append(f"Below the shell, {k}: "
                     + (", ".join(f"`{f}`" for f in below) if below else "none") + ".")
        lines.append("")
    climbs = {(c["from"], c["to"]) for k in labels for c in runs[k]["climbs"]}
    lines.append("The climbs: " + ("; ".join(f"`{a}` to `{b}`" for a, b in sorted(climbs))
                                   if climbs else "none") + ".")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    rest: list[str] = []
    if "--" in words:
        at = words.index("--")
        words, rest = words[:at], words[at + 1:]
    ap = argparse.ArgumentParser(
        prog=COMMAND,
        usage="%(prog)s [--out FILE [--label NAME]] [--timeout S]\n"
              "       %(prog)s --child TRACE -- LAUNCHER-ARGS...",
        description="Where the configuration travels at run time: which functions in "
        "launcher/ and hal/ receive the whole Settings, which receive one of its sections, "
        "and which of those calls climb the layers (a caller in a lower layer than the "
        "callee). The rule it measures: only the shell (launcher/cli and the composition "
        "root) handles a whole Settings.",
        epilog=f"It runs `launcher {' '.join(launcher_args(Path('DIR/state.json')))}` in a "
        "child process under a profiler (every thread), opens the console's pty and sends "
        "these lines, each answered before the next: " + "; ".join(LINES) + ". Then it "
        "stops the child with SIGTERM and reads its trace. The result names the modules and "
        "functions the whole Settings and each section entered, the climbs, the call counts "
        "and each line's final answer. Exit status 0 when the walk ran to its end (whatever "
        "the answers), 1 when it did not (the message names the step, with the child's "
        "standard error), 2 a bad option.")
    ap.add_argument("--out", type=Path, metavar="FILE",
                    help="write the JSON result to FILE (whole, or not at all) and the "
                         "summary to standard output; without it, the JSON goes to standard "
                         "output and the summary to standard error")
    ap.add_argument("--label", default="now", metavar="NAME",
                    help="the name the run is kept under in --out's file (default now); the "
                         "file's other runs stay (docs/results/settings_walk.json keeps "
                         "before and now)")
    ap.add_argument("--timeout", type=float, default=TOTAL_WAIT, metavar="S",
                    help=f"bound on the start and the whole script, in seconds (default "
                         f"{TOTAL_WAIT:g}); each line's answer is also bounded by "
                         f"{REPLY_WAIT:g} s and the stop by {STOP_WAIT:g} s")
    ap.add_argument("--child", type=Path, metavar="TRACE",
                    help="internal: be the child, run `launcher LAUNCHER-ARGS...` "
                         "under the profiler and write its trace to TRACE")
    args = ap.parse_args(words)
    if args.child is not None:
        return child(args.child, rest)
    if rest:
        ap.error("launcher arguments after -- are for --child only")
    if args.timeout <= 0:
        ap.error("--timeout must be above 0")
    try:
        result = walk(args.timeout)
    except WalkError as exc:
        print(f"{COMMAND}: {exc}", file=sys.stderr)
        return 1
    if args.out is None:
        print(json.dumps(result, indent=2))
        print(summary(result), file=sys.stderr)
    else:
        from bench.keep import keep

        keep(args.out, kept(args.out, args.label, result))
        print(summary(result))
        print(f"{COMMAND}: kept the result in {args.out} as {args.label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
