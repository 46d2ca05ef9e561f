"""The benchmark suite: every figure, repeated, printed as a table and written to a Markdown file.

    python -m bench [--quick] [--runs N] [--only press,service,...] [--out FILE]
                    [--compare-root DIR]

Each benchmark runs several times and each figure is reported as min / median / max over
the runs; a figure with a target says whether the median meets it. The page goes to
``--out`` (``bench-report/PERFORMANCE.md`` by default; ``make benchmarks`` names
``docs/PERFORMANCE.md``, the committed one). ``--quick`` runs every
benchmark with small counts (for CI: under a minute; its timings are not meant to be
compared). ``--compare-root DIR`` also times another checkout (the code before a change,
e.g. unpacked with ``git archive``) for the figures a change was made for.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench import pages, report
from bench.keep import keep
from bench.report import fmt_for

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("press", "service", "startup", "console", "games", "jobs", "scale", "profile")


@dataclass(frozen=True)
class Plan:
    """How much of each benchmark a mode runs."""

    quick: bool
    press_runs: int = 5  # latency at fast gaps (about 8 ms a press)
    presses: int = 3000
    lids: int = 300
    human_runs: int = 3  # latency at human gaps (80-400 ms)
    human_presses: int = 300
    slow_runs: int = 2
    slow_presses: int = 2000
    gc_runs: int = 1  # the press runs with Python's own gc, and with the log at WARNING
    cpu_runs: int = 5  # the CPU budget per press: medians over at least 5 runs
    cpu_presses: int = 120
    cpu_fast_presses: int = 400
    service_runs: int = 2
    idle: float = 30.0
    service_warmup: int = 1000
    service_presses: int = 10_000
    service_together: bool = False  # today's service run and the web's at once (CI's budget)
    start_samples: int = 7
    console_runs: int = 3
    console_lines: int = 20_000
    games_runs: int = 3
    peer_runs: int = 5  # rounds of the peer comparisons (medians over at least 5)
    engine_seconds: float = 2.0
    jobs_runs: int = 3
    jobs_games: int = 600
    scale_runs: int = 3
    scale_players: tuple[int, ...] = tuple(range(2, 11))
    scale_direct: int = 40
    scale_firmware: int = 4
    profile_scale: float = 1.0
    compare_idle: float = 20.0


QUICK = Plan(quick=True, press_runs=2, presses=300, lids=30, human_runs=1, human_presses=12,
             slow_runs=1, slow_presses=200, gc_runs=0, cpu_runs=2, cpu_presses=10,
             cpu_fast_presses=40, service_runs=1, idle=2.0, service_warmup=50,
             service_presses=300, service_together=True, start_samples=3, console_runs=2,
             console_lines=1500,
             games_runs=2, peer_runs=2, engine_seconds=0.25,
             jobs_runs=2, jobs_games=24, scale_runs=2, scale_players=(2, 6, 10),
             scale_direct=3, scale_firmware=1, profile_scale=0.2, compare_idle=3.0)



@dataclass
class Figure:
    """One row of the summary: samples over the runs, and its target."""

    name: str
    unit: str
    samples: list[float]
    target: float | None = None  # the median must be at most this (None: reported only)
    target_text: str = ""
    note: str = ""
    higher_is_better: bool = False
    section: str = ""  # the benchmark that made it (set by Results.add)

    @property
    def met(self) -> bool | None:
        if self.target is None or not self.samples:
            return None
        med = statistics.median(self.samples)
        return med >= self.target if self.higher_is_better else med <= self.target


@dataclass
class Results:
    plan: Plan
    figures: list[Figure] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    section: str = ""  # the benchmark running now
    # Each section's run: its command, start, seconds, loads and the details keys it wrote.
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(self, *figures: Figure) -> None:
        for f in figures:
            f.section = f.section or self.section
        self.figures.extend(figures)


# --- the results file: every figure and detail the Markdown is rendered from --------------


def to_json(r: Results, info: dict[str, Any]) -> dict[str, Any]:
    return {"plan": asdict(r.plan), "figures": [asdict(f) for f in r.figures],
            "details": r.details, "seconds": r.seconds, "runs": r.runs,
            "info": {**info, "started": info["started"].isoformat(),
                     "compare_root": str(info["compare_root"] or "") or None,
                     "out_dir": str(info["out_dir"])}}


def _int_keys(x: Any) -> Any:
    """JSON's object keys back to the whole numbers they were (players, jobs)."""
    if isinstance(x, dict):
        return {(int(k) if isinstance(k, str) and k.lstrip("-").isdigit() else k): _int_keys(v)
                for k, v in x.items()}
    if isinstance(x, list):
        return [_int_keys(v) for v in x]
    return x


def from_json(data: dict[str, Any]) -> tuple[Results, dict[str, Any]]:
    data = {**data, "details": _int_keys(data["details"])}
    plan = dict(data["plan"])
    plan["scale_players"] = tuple(plan["scale_players"])
    r = Results(Plan(**plan), [Figure(**f) for f in data["figures"]], data["details"],
                data["seconds"], runs=data["runs"])
    raw = data["info"]
    info = {**raw, "started": dt.datetime.fromisoformat(raw["started"]),
            "compare_root": Path(raw["compare_root"]) if raw["compare_root"] else None,
            "out_dir": Path(raw["out_dir"])}
    return r, info


def keep_others(r: Results, old: dict[str, Any]) -> None:
    """Into ``r`` (a run of some sections), the other sections of an earlier run, so that
    ``--only`` rewrites its sections and keeps the rest of the page as it was measured."""
    prior, _ = from_json(old)
    mine = set(r.runs)
    for name, run in prior.runs.items():
        if name in mine:
            continue
        r.runs[name] = run
        r.seconds[name] = prior.seconds.get(name, 0.0)
        for key in run["details"]:
            r.details.setdefault(key, prior.details[key])
    r.figures += [f for f in prior.figures if f.section not in mine]
    order = {name: i for i, name in enumerate(SECTIONS)}
    r.figures.sort(key=lambda f: order.get(f.section, len(order)))  # stable: run order kept


def spread(xs: list[float], fmt: str = "{:,.0f}") -> str:
    if not xs:
        return "–"
    lo, med, hi = min(xs), statistics.median(xs), max(xs)
    return " / ".join(fmt.format(v) for v in (lo, med, hi))


# --- the benchmarks ------------------------------------------------------------------------


def _bench_cmd(module: str, root: Path | None) -> list[str]:
    """``python -m bench.MODULE``, or the same against another checkout's launcher."""
    if root is None:
        return [sys.executable, "-m", f"bench.{module}"]
    code = (f"import sys; sys.path[:0] = [{str(root)!r}, {str(ROOT)!r}]; "
            f"from bench.{module} import main; sys.exit(main(sys.argv[1:]))")
    return [sys.executable, "-c", code]


def _json_run(cmd: list[str], cwd: Path) -> dict[str, Any]:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _json_runs(cmds: list[list[str]], together: bool) -> list[dict[str, Any]]:
    """``_json_run`` of each command here, one after the other or all at once."""
    if not together:
        return [_json_run(cmd, ROOT) for cmd in cmds]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(cmds)) as pool:
        return list(pool.map(lambda cmd: _json_run(cmd, ROOT), cmds))


def press_runs(n: int, presses: int, lids: int, *extra: str,
               root: Path | None = None) -> list[dict[str, Any]]:
    args = ["--presses", str(presses), "--lids", str(lids), *extra]
    return [_json_run([*_bench_cmd("press", root), *args], root or ROOT) for _ in range(n)]


def bench_press(r: Results, root: Path | None) -> None:
    p = r.plan
    fast = press_runs(p.press_runs, p.presses, p.lids, "--gaps", "fast")
    human = press_runs(p.human_runs, p.human_presses, max(1, p.lids // 10), "--gaps", "human")
    slow = press_runs(p.slow_runs, p.slow_presses, max(1, p.lids // 2), "--slow-store")
    plain_gc = press_runs(p.gc_runs, p.presses, p.lids, "--gc", "default")
    quiet = press_runs(p.gc_runs, p.presses, p.lids, "--log", "warning")
    # The CPU runs alternate human and fast gaps, each in a fresh process.
    cpu_human, cpu_fast = [], []
    for _ in range(p.cpu_runs):
        cpu_human.append(_json_run([*_bench_cmd("press", None), "--cpu", "--gaps", "human",
                                    "--presses", str(p.cpu_presses)], ROOT))
        cpu_fast.append(_json_run([*_bench_cmd("press", None), "--cpu", "--gaps", "fast",
                                   "--presses", str(p.cpu_fast_presses)], ROOT))
    r.details["press"] = {"fast": fast, "human": human, "slow": slow, "default_gc": plain_gc,
                          "quiet_log": quiet}
    r.details["cpu"] = {"human": cpu_human, "fast": cpu_fast}

    def col(rs: list[dict[str, Any]], path: str, key: str) -> list[float]:
        return [x[path][key] for x in rs]

    for label, runs in (("human gaps (80-400 ms)", human), ("fast gaps (~8 ms)", fast)):
        r.add(
            Figure(f"{label}: button edge → IN1 write, p50", "µs",
                   col(runs, "edge_to_motor", "p50_us")),
            Figure(f"{label}: button edge → IN1 write, p99", "µs",
                   col(runs, "edge_to_motor", "p99_us"), 1000, "≤ 1 ms"),
            Figure(f"{label}: button edge → IN1 write, max", "µs",
                   col(runs, "edge_to_motor", "max_us"), 5000, "≤ 5 ms"),
            Figure(f"{label}:   of which the thread hand-over (edge → reactor), p50", "µs",
                   col(runs, "edge_to_reactor", "p50_us")),
            Figure(f"{label}:   of which the firmware's handling (reactor → IN1), p50", "µs",
                   col(runs, "reactor_to_motor", "p50_us")),
            Figure(f"{label}: button edge → audio play call, p99", "µs",
                   col(runs, "edge_to_audio", "p99_us"), 2000, "≤ 2 ms"),
        )
    r.add(
        Figure("CPU of the firmware's handling of a press (posted edge → last pin write), "
               "human gaps, median", "µs", [x["cpu"]["p50_us"] for x in cpu_human], 50,
               "≤ 50 µs (≈ 2 ms on a Pi Zero 2 W)", note="cold caches, as real presses are"),
        Figure("the same, fast gaps, median", "µs", [x["cpu"]["p50_us"] for x in cpu_fast],
               note="caches warmer"),
        Figure("lid leaving closed → motor stop (first stopping write), p99", "µs",
               col(fast, "lid_to_stop", "p99_us"), 1000, "≤ 1 ms"),
        Figure("slow state store (200 ms a save): edge → IN1 write, p99", "µs",
               col(slow, "edge_to_motor", "p99_us"), 1000, "unchanged (≤ 1 ms)"),
        Figure("slow state store: lid → motor stop, p99", "µs",
               col(slow, "lid_to_stop", "p99_us"), 1000, "unchanged (≤ 1 ms)"),
    )
    if root is not None:
        r.details["press_before"] = press_runs(1, p.presses // 2, p.lids // 2, root=root)
        r.details["cpu"]["before"] = [
            _json_run([*_bench_cmd("press", root), "--cpu", "--gaps", "human", "--presses",
                       str(p.cpu_presses)], root) for _ in range(max(1, p.cpu_runs // 2))]
        r.add(Figure("the same, human gaps, the code before (compare root), median", "µs",
                     [x["cpu"]["p50_us"] for x in r.details["cpu"]["before"]]))


def bench_service(r: Results, root: Path | None) -> None:
    p = r.plan
    runs, web = [], []
    for i in range(p.service_runs):
        args = ["--idle", str(p.idle), "--warmup", str(p.service_warmup), "--presses",
                str(p.service_presses)]
        if i:
            args.append("--no-strace")  # one strace window is enough to name the calls
        # bench.service fails (and the suite with it) unless the firmware's counters show
        # every press it sent accepted and every shot's cards shot. Today's run and the same
        # with the web panel on alternate, so that a busy spell of the machine falls on both
        # (the quick mode runs them at once: most of a run is waiting through its windows).
        cmd = [*_bench_cmd("service", None), *args]
        web_cmd = [*cmd, "--web"]
        if p.service_together and "--no-strace" not in web_cmd:
            web_cmd.append("--no-strace")  # its strace window would be the run's longest
        today, on = _json_runs([cmd, web_cmd], p.service_together)
        runs.append(today)
        web.append(on)
    r.details["service"] = runs
    r.details["service_web"] = web
    asleep_extra = [x["asleep"]["wakeups"] - x["asleep"]["watchdog_pings"] for x in runs]
    r.add(
        Figure("idle CPU awake, console on a pty", "%",
               [x["awake"]["cpu_percent"] for x in runs], 0.5, "≤ 0.5% of a core"),
        Figure("idle CPU asleep", "%", [x["asleep"]["cpu_percent"] for x in runs], 0.05,
               "≤ 0.05% of a core"),
        Figure(f"wake-ups asleep, per {p.idle:g} s (voluntary context switches)", "",
               [x["asleep"]["wakeups"] for x in runs]),
        Figure(f"watchdog pings asleep, per {p.idle:g} s", "",
               [x["asleep"]["watchdog_pings"] for x in runs]),
        Figure("wake-ups asleep beyond the watchdog's", "", asleep_extra, 0, "none"),
        Figure("resident memory after start", "MiB", [x["rss_start_mib"] for x in runs], 40,
               "≤ 40 MB"),
        Figure(f"resident memory after {p.service_warmup:,} + {p.service_presses:,} accepted "
               "console presses", "MiB", [x["rss_end_mib"] for x in runs], 40, "≤ 40 MB"),
        Figure(f"memory growth over {p.service_presses:,} accepted presses, after a "
               f"{p.service_warmup:,}-press warm-up", "MiB",
               [x["rss_end_mib"] - x["rss_warm_mib"] for x in runs], 0.2, "≤ 0.2 MiB",
               note="counted by the firmware: " + ", ".join(
                   f"{k} {v:,}" for k, v in runs[0]["counted"].items())),
    )
    _service_web(r, runs, web)
    from bench.press import board_memory

    mem = [board_memory(p.service_presses) for _ in range(p.service_runs)]
    r.details["board_memory"] = mem
    r.add(Figure(f"simulated board + firmware (SimRig), memory kept per press over "
                 f"{p.service_presses:,} presses, histories full", "bytes",
                 [m["bytes_per_press"] for m in mem], 16, "flat (≤ 16 bytes a press)"))
    if root is not None:
        args = ["--idle", str(p.compare_idle), "--presses", str(p.service_presses // 5),
                "--warmup", str(p.service_warmup // 5), "--root", str(root)]
        r.details["service_before"] = _json_run([*_bench_cmd("service", None), *args], ROOT)


def _service_web(r: Results, runs: list[dict[str, Any]], web: list[dict[str, Any]]) -> None:
    """The figures of the runs with the web panel on, beside today's (issue 43: READY and
    the idle cost unchanged within noise)."""
    p = r.plan

    def beyond(x: dict[str, Any]) -> int:
        return x["wakeups"] - x["watchdog_pings"]

    r.add(
        Figure("`launcher run`: exec → READY (sd_notify), [web] off", "s",
               [x["start_to_ready_s"] for x in runs]),
        Figure("`launcher run`: exec → READY (sd_notify), [web] on", "s",
               [x["start_to_ready_s"] for x in web]),
        Figure("idle CPU awake, [web] on", "%", [x["awake"]["cpu_percent"] for x in web], 0.5,
               "≤ 0.5% of a core"),
        Figure("idle CPU asleep, [web] on", "%", [x["asleep"]["cpu_percent"] for x in web],
               0.05, "≤ 0.05% of a core"),
        Figure("idle CPU asleep, [web] on, a paired client on the live stream", "%",
               [x["asleep_client"]["cpu_percent"] for x in web]),
        Figure(f"wake-ups asleep, [web] on, per {p.idle:g} s", "",
               [x["asleep"]["wakeups"] for x in web]),
        Figure(f"wake-ups asleep, [web] on, a paired client on the live stream, per "
               f"{p.idle:g} s", "", [x["asleep_client"]["wakeups"] for x in web]),
        Figure("wake-ups asleep beyond the watchdog's, [web] on", "",
               [beyond(x["asleep"]) for x in web], 0, "none"),
        Figure("resident memory after start, [web] on", "MiB",
               [x["rss_start_mib"] for x in web], 40, "≤ 40 MB"),
        Figure(f"resident memory, [web] on, after {p.service_warmup:,} + "
               f"{p.service_presses:,} accepted console presses", "MiB",
               [x["rss_end_mib"] for x in web], 40, "≤ 40 MB"),
        Figure(f"memory growth over {p.service_presses:,} accepted presses, [web] on", "MiB",
               [x["rss_end_mib"] - x["rss_warm_mib"] for x in web], 0.2, "≤ 0.2 MiB"),
    )


def bench_startup(r: Results, root: Path | None) -> None:
    from bench import startup

    d = startup.measure(max(5, r.plan.start_samples))  # the budgets are medians of >= 5
    ratios = {f"`launcher run` → READY, {v['label']}": v["ratio"]
              for v in d["variants"].values()}
    ratios["`launcher --help`"] = d["help_ratio"]
    r.details["startup_cpu"] = {"result": d, "ratios": ratios}
    run = d["variants"]["device"]
    r.details["imports"] = {k: v["top_cumulative"] for k, v in d["importtime"].items()}
    r.add(Figure("`python -c pass`: CPU", "ms", d["python_pass_ms"]),
          Figure("`launcher run`: exec → READY, CPU (a sound device, audio auto)", "ms",
                 run["cpu_ms"]),
          Figure("`launcher run`: exec → READY, CPU / `python -c pass`", "x", run["ratio"],
                 5, "≤ 5x"),
          Figure("`launcher run` with no sound device: CPU / `python -c pass`", "x",
                 d["variants"]["as_is"]["ratio"], 5, "≤ 5x"),
          Figure("`launcher --help`: CPU", "ms", d["help_ms"]),
          Figure("`launcher --help`: CPU / `python -c pass`", "x", d["help_ratio"], 2, "≤ 2x"),
          Figure("`launcher run`: exec → READY (sd_notify)", "s", run["wall_s"], 1.0, "≤ 1.0 s"),
          Figure("`launcher --help`: exec → exit", "s", d["help_wall_s"], 0.3, "≤ 0.3 s"))
    if root is not None:
        before = startup.measure(max(5, r.plan.start_samples), root)
        r.details["startup_before"] = before
        r.details["help_before"] = before["help_wall_s"]
        r.details["imports_before"] = before["importtime"]["launcher --help"]["top_cumulative"]


def bench_console(r: Results, root: Path | None) -> None:
    from bench import console

    p = r.plan
    limited = [console.run(p.console_lines, 0.5 if p.quick else 2.0, True)
               for _ in range(p.console_runs)]
    lifted = [console.run(p.console_lines, 0.2, False) for _ in range(p.console_runs)]
    r.details["console"] = {"limited": limited, "lifted": lifted}
    r.add(
        Figure("console capacity, limits lifted", "lines/s",
               [x["lines_per_s"] for x in lifted], note="what the console can answer"),
        Figure("console with its limits (the configured cap)", "lines/s",
               [x["lines_per_s"] for x in limited],
               note=f"{console.BUDGET} lines per {console.TICK * 1e3:g} ms tick"),
        Figure("10 ms timer lateness during a flood (limits on), p99", "ms",
               [x["flood_p99_ms"] for x in limited]),
        Figure("10 ms timer lateness during a flood (limits on), max", "ms",
               [x["flood_max_ms"] for x in limited]),
        Figure("10 ms timer lateness during a flood (limits lifted), max", "ms",
               [x["flood_max_ms"] for x in lifted]),
    )


def bench_games(r: Results, root: Path | None) -> None:
    from bench import games

    p = r.plan
    ours = [games.alternate(games.our_engines(seed=1 + i), p.engine_seconds, 2)
            for i in range(p.games_runs)]
    peers = []
    for _ in range(p.peer_runs):
        run = []
        for title, unit, runners in games.peer_pairs():
            ready = {k: v for k, v in runners.items() if not isinstance(v, str)}
            skipped = {k: v for k, v in runners.items() if isinstance(v, str)}
            run.append({"title": title, "unit": unit, "skipped": skipped,
                        "results": games.alternate(ready, p.engine_seconds, 2)})
        peers.append(run)
    r.details["games"] = {"ours": ours, "peers": peers}
    for name in ours[0]:
        r.add(Figure(f"{name}: games/s", "games/s", [x[name]["games_per_s"] for x in ours]),
              Figure(f"{name}: steps/s", "steps/s", [x[name]["steps_per_s"] for x in ours]))
    r.add(Figure("UNO Flip Attack turn / 4-player classic UNO turn, same run", "x",
                 [games.flip_attack_vs_uno(x) for x in ours], target=1.5,
                 target_text="at most 1.5x (games issue 22)"))
    # The peers' goals, each round's ratio taken within the round (a peer not installed:
    # no row, and the table below says why).
    for name, mine, theirs, goal in (
            ("classic UNO games/s ÷ RLCard's, same round", games.OURS_UNO, games.RLCARD_UNO, 3),
            ("Gin Rummy hands/s ÷ OpenSpiel's, same round", games.OURS_GIN, games.OPENSPIEL_GIN,
             5)):
        ratios = [x["results"][mine]["games_per_s"] / x["results"][theirs]["games_per_s"]
                  for run in peers for x in run
                  if mine in x["results"] and theirs in x["results"]]
        if ratios:
            r.add(Figure(name, "x", ratios, target=goal, higher_is_better=True,
                         target_text=f"at least {goal}x (games issue 22)"))


def bench_jobs(r: Results, root: Path | None) -> None:
    from bench import games

    p = r.plan
    jobs = games.default_jobs()
    runs = [games.jobs_speedup(p.jobs_games, jobs) for _ in range(p.jobs_runs)]
    r.details["jobs"] = {"jobs": jobs, "runs": runs}
    for j in jobs:
        r.add(Figure(f"`simulate --jobs {j}`, {p.jobs_games} games: speed-up over 1 job", "x",
                     [x[j]["speedup"] for x in runs]))


def bench_scale(r: Results, root: Path | None) -> None:
    from bench import games

    p = r.plan
    runs = [games.scale(list(p.scale_players), p.scale_direct, p.scale_firmware, seed=1 + i)
            for i in range(p.scale_runs)]
    r.details["scale"] = runs


def bench_profile(r: Results, root: Path | None) -> None:
    from bench import profile

    r.details["profile"] = profile.profiles(r.plan.profile_scale)


BENCHES: dict[str, Callable[[Results, Path | None], None]] = {
    "press": bench_press, "service": bench_service, "startup": bench_startup,
    "console": bench_console, "games": bench_games, "jobs": bench_jobs, "scale": bench_scale,
    "profile": bench_profile,
}


# --- the report -----------------------------------------------------------------------------


def machine() -> dict[str, str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": str(os.cpu_count()), "system": platform.platform(),
            "python": f"{platform.python_implementation()} {platform.python_version()}"}


def print_table(r: Results) -> None:
    print(f"{'figure':<64} {'min / median / max':>30} {'target':>22}")
    for f in r.figures:
        met = {True: "met", False: "NOT met", None: ""}[f.met]
        print(f"{f.name[:64]:<64} {spread(f.samples, fmt_for(f.unit)) + ' ' + f.unit:>30} "
              f"{(f.target_text + ' ' + met).strip():>22}")


def render(r: Results, info: dict[str, Any]) -> str:
    """The page of a run (``info["argv"]``: its command)."""
    return report.render(r, info["argv"], info)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="small counts, under a minute (CI; the timings are not for comparing)")
    ap.add_argument("--runs", type=int, help="runs of every repeated benchmark")
    ap.add_argument("--only", help="comma-separated: " + ",".join(SECTIONS))
    # Not the committed page by default: a quick look must not overwrite measured figures.
    ap.add_argument("--out", type=Path, default=Path("bench-report") / "PERFORMANCE.md",
                    help="the Markdown file to write, its figures beside it as .json (default "
                         "bench-report/PERFORMANCE.md here; `make benchmarks` writes "
                         "docs/PERFORMANCE.md)")
    ap.add_argument("--compare-root", type=Path, metavar="DIR",
                    help="also time another checkout's launcher (before a change)")
    ap.add_argument("--compare-label", default=None, metavar="TEXT",
                    help="what the compare root is, for the report (default: its path)")
    a = ap.parse_args(argv)
    plan = QUICK if a.quick else Plan(quick=False)
    if a.runs is not None:
        if a.runs < 1:
            ap.error("--runs: must be at least 1")
        from dataclasses import replace

        plan = replace(plan, **{k: a.runs for k in ("press_runs", "human_runs", "slow_runs",
                                                     "cpu_runs", "service_runs",
                                                     "console_runs", "games_runs", "peer_runs",
                                                     "jobs_runs", "scale_runs")})
    only = SECTIONS if not a.only else tuple(s.strip() for s in a.only.split(","))
    unknown = [s for s in only if s not in SECTIONS]
    if unknown:
        ap.error(f"--only: unknown {', '.join(unknown)} (choose from {', '.join(SECTIONS)})")
    if a.compare_root is not None and not (a.compare_root / "launcher").is_dir():
        ap.error(f"--compare-root: {a.compare_root} has no launcher/ package")
    results = Results(plan)
    info: dict[str, Any] = {"machine": machine(), "started": dt.datetime.now().astimezone(),
                            "load_before": os.getloadavg(), "compare_root": a.compare_root,
                            "compare_label": a.compare_label or (str(a.compare_root)
                                                                 if a.compare_root else None)}
    command = ["python", "-m", "bench", *argv]
    t0 = time.perf_counter()
    for name in only:
        print(f"bench: {name} ...", file=sys.stderr, flush=True)
        t, load, keys = time.perf_counter(), os.getloadavg()[0], set(results.details)
        started = dt.datetime.now().astimezone()
        results.section = name
        BENCHES[name](results, a.compare_root)
        results.seconds[name] = time.perf_counter() - t
        results.runs[name] = {"command": " ".join(command), "started": started.isoformat(),
                              "seconds": results.seconds[name], "load_before": load,
                              "load_after": os.getloadavg()[0], "quick": plan.quick,
                              "details": sorted(set(results.details) - keys)}
    info["load_after"] = os.getloadavg()
    info["out_dir"] = a.out.resolve().parent
    info["seconds"] = time.perf_counter() - t0
    info["argv"] = command
    store = results_file(a.out)
    if a.only and store.exists():
        old = json.loads(store.read_text(encoding="utf-8"))
        if old["plan"]["quick"] == plan.quick:
            keep_others(results, old)
    print_table(results)
    data = to_json(results, info)
    keep(store, data, indent=1)
    # The page is rendered from what the file holds, by the renderer of every generated page
    # (bench/pages.py), so the file alone renders it again (tests/docs checks they agree).
    pages.refresh(a.out, kind=pages.performance)
    print(f"bench: wrote {a.out} and {store} ({info['seconds']:.0f} s)", file=sys.stderr)
    return 0


def results_file(page: Path) -> Path:
    """The figures a page is rendered from: PERFORMANCE.md's are in PERFORMANCE.json."""
    return page.with_suffix(".json")
