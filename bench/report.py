"""docs/PERFORMANCE.md from the suite's results: every number in it comes from the run."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

# The Pi Zero 2 W against this machine, single-threaded Python: an estimate (``PI`` below says
# how it is made). A Python loop benchmark's public time on a Pi 3B+ (the Zero 2 W's core at
# 1.4 GHz) and on this machine, in seconds, and the Pi 3B+'s clock over the Zero 2 W's.
PI3_LOOP_S, HERE_LOOP_S, PI3_CLOCK_RATIO = 245, 8.2, 1.4
PI_SLOWDOWN, PI_SLOWDOWN_RANGE = 40, (20, 45)

# Why a target is not met, when it is not: what the measurements of this suite show.
REASONS = {
    "human gaps (80-400 ms): button edge → IN1 write, max": (
        "The worst press of hundreds is the scheduler's: a thread woken while both cores "
        "run other jobs waits for a time slice (milliseconds). The \"of which\" rows split "
        "the hand-over from the firmware's handling; the CPU rows are the firmware's own "
        "cost."),
    "fast gaps (~8 ms): button edge → IN1 write, max": (
        "As at human gaps: a time slice of the scheduler on a shared 2-core machine."),
    "human gaps": (
        "The hand-over (the OS waking the reactor thread, which then takes the GIL) is "
        "scheduling on a 2-core virtual machine shared with other engineers' test runs; the "
        "\"of which\" rows and the CPU rows show the firmware's own part."),
    "fast gaps": (
        "Scheduling of the reactor thread on a shared machine, as at human gaps."),
    "CPU of the firmware's handling": (
        "The window ends at the press's last pin write, IN1's duty (the amplifier and the "
        "LED are mostly on already at these gaps): what it holds is the debounce, the luck "
        "draw, the state machine's guards and commands, and the driver's wake with the "
        "roller's writes; no one of them is most of it. Each is slower with cold caches "
        "than warm (the fast-gap row). The profile below is of the whole handling, the log "
        "lines written after the pins included. The path is a chain of small Python calls "
        "(the debounce, the press guards, the draw, the machine's step, the actuators and "
        "their pin reads and writes); with cold caches each costs misses that a warm one "
        "does not."),
    "classic UNO games/s ÷ RLCard's": (
        "Per step ours is the faster by more than the goal (the steps/s column of the peer "
        "table), but a round of ours has about twice RLCard's steps: the rules RLCard leaves "
        "out (UNO calls and catches, Wild Draw Four challenges, the choice to keep a drawn "
        "card, the colour as a step of its own; its row lists them). Since the rules step one "
        "decision or one draw at a time (legality decided once, one settle check a step), "
        "each step costs a few more calls than the fused loop had inline (docs/games.md); "
        "no second, faster copy of the rules is kept. A compiled core or a round with fewer "
        "steps would make up the rest; neither is done."),
    "UNO Flip Attack turn / 4-player classic UNO turn": (
        "These engines are timed as `launcher simulate` plays them, and it now plays every "
        "game through the game-state contract (the launcher as the chance player; Flip "
        "Attack's summary hears every effect). A Flip Attack turn is more steps there than a "
        "UNO turn (every press a chance node, a hit several), so it costs more against a UNO "
        "turn than at the tables, where the goal is judged: docs/games.md's peer run gives "
        "both, the tables' ratio within the goal. Playing through the contract made "
        "`simulate`'s games two to four times slower than through the tables (the engine "
        "rows against the earlier run's); no second copy of the rules is kept to win it back."),
    "slow state store": (
        "The state writer is a thread of its own and the reactor never waits for it; what "
        "differs from the plain rows is within the run-to-run spread of the scheduler."),
    "lid leaving closed": ("Scheduling of the reactor thread, as for the press."),
    "idle CPU": ("Counted in clock ticks of /proc/PID/stat (10 ms each): over a short window "
                 "one tick is a large share; the guard thread's beat (the wake-ups below) "
                 "adds its own."),
    "wake-ups asleep beyond the watchdog's": (
        "The actuators' guard thread wakes every GUARD_BEAT (0.5 s) whether or not anything "
        "is driven, so that the watchdog can tell it lives (launcher/firmware/actuators.py): "
        "asleep, with nothing to guard, that is two wake-ups a second. Not changed yet."),
    "resident memory after start, [web] on": (
        "The panel's imports, loaded after READY: asyncio (with ssl and OpenSSL) and aiohttp "
        "with its parsers, and the panel's own modules; the rows of the web section below "
        "give the difference. Not trimmed yet."),
    "resident memory, [web] on": ("As after start: the panel's imports."),
    "memory growth": (
        "What grew between the warm-up and the end, found with tracemalloc and smaps inside "
        "the process: the simulated tray (now the newest 200 cards) and CPython's free list "
        "of 6-tuples (the circuit solver's cache key, now built from a list); see the "
        "per-run rows."),
    "`launcher --help`": ("Python's own start-up and the imports listed below."),
    "`launcher run`": ("Python's start-up, gpiozero and the firmware's imports (listed below)."),
}


def _spread(xs: list[float], fmt: str) -> str:
    if not xs:
        return "–"
    return " / ".join(fmt.format(v) for v in (min(xs), statistics.median(xs), max(xs)))


def fmt_for(unit: str) -> str:
    """How a figure of ``unit`` is written."""
    return {"s": "{:.3f}", "ms": "{:.1f}", "%": "{:.3f}", "MiB": "{:.1f}", "x": "{:.2f}"}.get(
        unit, "{:,.0f}")


def render(r: Any, argv: list[str], info: dict[str, Any]) -> str:
    p = r.plan
    m = info["machine"]
    out: list[str] = []
    w = out.append
    w("# Performance\n")
    w(f"Generated by `{' '.join(argv)}`{' (quick mode: small counts, for CI)' if p.quick else ''}"
      f" on {info['started']:%Y-%m-%d %H:%M %Z}, in {info['seconds']:.0f} s. Do not edit: "
      "`make benchmarks` (`python -m bench --out docs/PERFORMANCE.md`) writes this file "
      "again, and the README quotes it. The benchmarks are in `bench/` (each runs alone "
      "too: `python -m bench.press`, `bench.service`, `bench.console`, `bench.games`, "
      "`bench.profile`).\n")
    kept = [(name, run) for name, run in r.runs.items() if run["command"] != " ".join(argv)]
    if kept:
        w("- **Sections from earlier runs** (`--only` rewrites its sections and keeps the "
          "others): " + "; ".join(f"{name}: `{run['command']}` on {run['started'][:16]}"
                                   for name, run in kept) + ".")
    w(f"- **Machine:** {m['cpu']}, {m['cores']} cores; {m['system']}; {m['python']}.")
    lb, la = info["load_before"], info["load_after"]
    w(f"- **Shared:** the machine was shared with other engineers' test runs while this ran "
      f"(load average {lb[0]:.2f} before, {la[0]:.2f} after, on {m['cores']} cores), so "
      "each benchmark ran several times: every figure is **min / median / max over the "
      "runs**, and a target is judged on the median.")
    w("- **Through the real firmware path:** the press figures use the firmware as `launcher "
      "run` builds it (actuators, cue player, state file with its writer thread) on the "
      "simulated board, with the real reactor on its own thread; the idle, start-up and "
      "memory figures run `launcher run` itself as systemd starts it.\n")

    w("## Summary\n")
    w("| figure | min / median / max | target | |")
    w("|---|---|---|---|")
    for f in r.figures:
        met = {True: "met", False: "**not met**", None: ""}[f.met]
        unit = f" {f.unit}" if f.unit else ""
        note = f" ({f.note})" if f.note else ""
        w(f"| {f.name}{note} | {_spread(f.samples, fmt_for(f.unit))}{unit} | "
          f"{f.target_text} | {met} |")
    w("")
    missed = [f for f in r.figures if f.met is False]
    w("### Targets not met\n")
    if not missed:
        w("Every target in the summary is met by the median of its runs.\n")
    for f in missed:
        reason = next((v for k, v in REASONS.items() if f.name.startswith(k)),
                      "No explanation recorded.")
        w(f"- **{f.name}** (median {statistics.median(f.samples):,.3g} {f.unit}, target "
          f"{f.target_text}): {reason}")
    if missed:
        w("")

    _pi(r, w)
    if info.get("compare_label"):
        w(f"The \"before\" rows below time {info['compare_label']} "
          "(`--compare-root`).\n")
    _cpu(r, w)
    _press(r, w)
    _service(r, w, info)
    _startup(r, w)
    _console(r, w)
    _games(r, w)
    _jobs(r, w)
    _scale(r, w, info)
    _profile(r, w)
    return "\n".join(out).rstrip() + "\n"


PI = """## The budget on a Raspberry Pi Zero 2 W

The BOM's board is a Pi Zero 2 W (4 Cortex-A53 cores at 1 GHz). Nothing here was measured
on one: the figures above are this machine's, and the budgets are written for the Pi by a
slowdown factor, **an estimate** from public single-thread figures. A Pi 3B+ (the same
Cortex-A53 at 1.4 GHz) runs a Python loop benchmark in {pi3:g} s that takes {here:g} s here,
{ratio:.0f}x; at 1 GHz the Zero 2 W is {clock:.1f}x slower again, about **{factor}x** this machine
for single-threaded Python, within {lo}-{hi}x once memory and the benchmark's own spread
are allowed for. The budgets are therefore CPU time here (wall time on this shared machine
is noise), scaled by that factor:
"""


def _pi(r: Any, w: Any) -> None:
    lo, hi = PI_SLOWDOWN_RANGE
    pi3, here, clock = PI3_LOOP_S, HERE_LOOP_S, PI3_CLOCK_RATIO
    w(PI.format(factor=PI_SLOWDOWN, lo=lo, hi=hi, pi3=pi3, here=here, ratio=pi3 / here,
                clock=clock))
    cpu = r.details.get("cpu")
    if cpu:
        med = statistics.median(x["cpu"]["p50_us"] for x in cpu["human"])
        w(f"- a press's handling, posted edge to its last pin write, at human gaps: median "
          f"{med:.0f} µs of CPU here (the median of {len(cpu['human'])} runs' medians), so "
          f"about {med * PI_SLOWDOWN / 1000:.1f} ms on the Zero 2 W "
          f"({med * lo / 1000:.1f}-{med * hi / 1000:.1f} ms); the budget is 50 µs here, "
          f"{50 * PI_SLOWDOWN / 1000:.0f} ms there;")
    start = r.details.get("startup_cpu")
    if start:
        for label, xs in start["ratios"].items():
            w(f"- {label}: median {statistics.median(xs):.2f}x the CPU of `python -c pass` in "
              "the same rounds (the start-up section);")
    w("- asleep: no wake-ups but the watchdog's (the idle rows), whatever the board's "
      "speed.\n")


def _cpu(r: Any, w: Any) -> None:
    d = r.details.get("cpu")
    if not d:
        return
    p = r.plan
    w("## CPU of a press, run by run\n")
    w(f"`python -m bench.press --cpu --gaps human --presses {p.cpu_presses}` and `--gaps "
      f"fast --presses {p.cpu_fast_presses}`, alternated, a fresh process each: the "
      "firmware as `launcher run` builds it (stock audio `auto`, state file on, the log at "
      "INFO on stderr) on one thread with a manual reactor moved on as real time sleeps "
      "through each gap; CPU time of the thread (`time.thread_time_ns`) from the posted "
      "button edge to the last pin write the press makes, the simulator's physics (run "
      "inside the mock pins' writes) subtracted. Every press shoots one card; each run "
      "checks an IN1 write per press and the firmware's counters.\n")
    w("| gaps | presses | counted presses / shots / cards shot | pin writes a press | "
      "CPU p50 / p99 / max µs |")
    w("|---|---|---|---|---|")
    for label, runs in (("human (80-400 ms)", d["human"]), ("fast (~8 ms)", d["fast"]),
                        ("human, before (compare root)", d.get("before", []))):
        for x in runs:
            c, k = x["cpu"], x["counted"]
            w(f"| {label} | {x['presses']} | {k['presses']} / {k['shots']} / "
              f"{k['cards_shot']} | {x['pin_writes_per_press']:g} | {c['p50_us']:,.0f} / "
              f"{c['p99_us']:,.0f} / {c['max_us']:,.0f} |")
    w("")


def _press(r: Any, w: Any) -> None:
    d = r.details.get("press")
    if not d:
        return
    p = r.plan
    w("## Press latency, run by run\n")
    w(f"`python -m bench.press --gaps fast --presses {p.presses} --lids {p.lids}` and "
      f"`--gaps human --presses {p.human_presses}`, a fresh process per run (slow store: "
      "`--slow-store`, Python's own gc: `--gc default`, log at WARNING: `--log warning`). "
      "The firmware as `launcher run` builds it: stock audio `auto`, state file on (its "
      "writes are counted), the log at INFO, the real reactor on its own thread. Every press "
      "shoots one card, so each has a motor command and a BAM cue; µs, from the pin edge "
      "to the write of IN1's duty (the driver sleeps between presses: the nSLEEP write "
      "comes just before). The DRV8833 then needs up to 1 ms more before its outputs follow "
      "(tWAKE, SLVSAR1E §7.3.4), which is the press-to-roller time to add on a real unit. "
      "Lid → stop is to the first write that stops the roller (nSLEEP or IN1 low). The "
      "interlocks with the reactor blocked are in hardware/SAFETY.md (`python -m "
      "bench.interlock`), and the real firmware process on a real kernel's pins in "
      "docs/kernel-tier.md (`bash .ci/kernel/report`).\n")
    w("| run | gaps | presses (counted) | edge→IN1 p50 / p99 / max | edge→audio p50 / p99 / "
      "max | lid→stop p50 / p99 / max | state writes | gc pauses gen0 / gen1 / gen2 "
      "(count, max µs) |")
    w("|---|---|---|---|---|---|---|---|")
    for label, runs in (("as `launcher run`", d["human"] + d["fast"]),
                        ("slow store", d["slow"]), ("Python's own gc", d["default_gc"]),
                        ("log at WARNING", d.get("quiet_log", [])),
                        ("before (compare root)", r.details.get("press_before", []))):
        for x in runs:
            def t(k: str, x: dict = x) -> str:
                v = x[k]
                if not v["n"]:
                    return "–"
                return f"{v['p50_us']:,.0f} / {v['p99_us']:,.0f} / {v['max_us']:,.0f}"
            gcs = " / ".join(f"{g['count']}, {g['max_us']:,.0f}" for g in
                             x["gc_pauses"].values())
            counted = x.get("counted", {}).get("presses", "?")
            w(f"| {label} | {x.get('gaps', 'fast')} | {x['presses']} ({counted}) | "
              f"{t('edge_to_motor')} | {t('edge_to_audio')} | {t('lid_to_stop')} | "
              f"{x['state_writes']} | {gcs} |")
    w("")


def _lapses(n: int) -> str:
    """A run's shots ended by a lapsed lease (the reactor starved on this shared machine)."""
    return f" ({n} shot{'s' if n != 1 else ''} ended by a lapsed lease, cleared)" if n else ""


def _service(r: Any, w: Any, info: dict[str, Any]) -> None:
    runs = r.details.get("service")
    if not runs:
        return
    p = r.plan
    w("## Idle cost and memory of `launcher run`, run by run\n")
    w(f"`python -m bench.service --idle {p.idle:g} --warmup {p.service_warmup} --presses "
      f"{p.service_presses}`: the service on the simulated board, console on a pty, stock "
      "audio (`auto`), a state file, `NOTIFY_SOCKET` and `WATCHDOG_USEC` (10 s, as the "
      "unit) set; CPU from /proc/PID/stat over each window; wake-ups are the context "
      "switches of all its threads. The presses are console `press` lines, each accepted "
      "(the counters are the firmware's own, from `stats`, over the measured presses); its "
      "luck is the benchmark's own (about one press in twenty shoots one or two cards), so "
      "that the roller's simulated time stays minutes.\n")
    w("| run | awake CPU % / wake-ups / pings | asleep CPU % / wake-ups / pings | RSS start / "
      "after warm-up / half / end MiB | counted presses / shots / cards shot | console "
      "presses/s |")
    w("|---|---|---|---|---|---|")
    web = r.details.get("service_web", [])
    rows: list[tuple[Any, dict[str, Any]]] = list(enumerate(runs, 1))
    rows += [(f"{i}, [web] on", x) for i, x in enumerate(web, 1)]
    before = r.details.get("service_before")
    if before:
        rows.append(("before (compare root)", before))
    for i, x in rows:
        a, s = x["awake"], x["asleep"]
        k = x.get("counted", {})
        w(f"| {i} | {a['cpu_percent']:.3f} / {a['wakeups']} / "
          f"{a['watchdog_pings']} | {s['cpu_percent']:.3f} / {s['wakeups']} / "
          f"{s['watchdog_pings']} | {x['rss_start_mib']:.2f} / {x.get('rss_warm_mib', 0):.2f} "
          f"/ {x['rss_half_mib']:.2f} / {x['rss_end_mib']:.2f} | {k.get('presses', '?'):,} / "
          f"{k.get('shots', '?'):,} / {k.get('cards_shot', '?'):,}"
          f"{_lapses(x.get('lapses', 0))} | "
          f"{x['press_commands_per_s']:,.0f} |")
    w("")
    audio = runs[0].get("audio_log")
    if audio:
        w("What the stock audio setting found (the service's log): " +
          "; ".join(f"`{line}`" for line in audio) + "\n")
    for label, x in (("now", runs[0]), ("[web] on", web[0] if web else None),
                     ("before", before)):
        st = x.get("asleep_strace") if x else None
        if st:
            calls = ", ".join(f"{k} {v}" for k, v in sorted(st["calls"].items(),
                                                             key=lambda kv: -kv[1]))
            w(f"System calls of every thread while asleep ({label}), `strace -c -f` over "
              f"{st['seconds']:g} s: {calls} ({st['total']} in all).\n")
        elif x and label == "now":
            w("strace is not installed (or cannot attach here): no system-call count.\n")
    if web:
        _service_web(r, w, runs, web)


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}{'' if n == 1 else 's'}"


def _service_web(r: Any, w: Any, runs: list[dict[str, Any]],
                 web: list[dict[str, Any]]) -> None:
    p = r.plan
    w("### The same with the web panel on\n")
    w(f"`python -m bench.service --idle {p.idle:g} --warmup {p.service_warmup} --presses "
      f"{p.service_presses} --web`, run after each of today's runs above"
      f"{' (at the same time as it, in the quick mode)' if p.service_together else ''}: the same "
      "service with `[web] enabled = true` on 127.0.0.1 (at a free port the bench names), as "
      "a Pi's service starts it after READY. Before the first window each run read the "
      "panel's `web:` line and checked that it answers `GET /` with 200 and `GET "
      "/api/status` with 401 (" + "; ".join(
          ", ".join(f"`{k}` {v}" for k, v in x["web"]["checked"].items()) for x in web) +
      "). The live-client window comes after the asleep ones, still asleep: a client paired "
      "through the page's `POST /api/pair` and the console's `web pair ID` holds "
      "`/api/events` open with its token, as a phone left open on the page (its first "
      "status came before the window; within it, " +
      "; ".join(_count(x["asleep_client"]["stream"]["events"], "event") + " and " +
                _count(x["asleep_client"]["stream"]["pings"], "keep-alive ping")
                for x in web) +
      "); its rows' difference is against the asleep window of the same runs. Min / median "
      "/ max over the runs; the difference is of the medians.\n")
    w("| figure | [web] off | [web] on | on − off |")
    w("|---|---|---|---|")

    def row(name: str, fmt: str, unit: str, get: Any, client: Any = None) -> None:
        off = [get(x) for x in runs] if client is None else [client(x) for x in web]
        on = [get(x) for x in web]
        diff = fmt.replace("{:", "{:+").format(statistics.median(on) - statistics.median(off))
        if not diff.strip("+-0.,"):
            diff = "±" + diff[1:]  # no difference at this precision, whatever its rounding
        w(f"| {name} | {_spread(off, fmt) + unit if client is None else '–'} | "
          f"{_spread(on, fmt)}{unit} | {diff}{unit} |")

    def beyond(x: dict[str, Any]) -> int:
        return x["wakeups"] - x["watchdog_pings"]

    row("exec → READY (sd_notify)", "{:.3f}", " s", lambda x: x["start_to_ready_s"])
    w(f"| READY → the panel's `web:` line (its imports and start, on the owner's thread "
      f"before the reactor runs: launcher/firmware/runner.py) | – | "
      f"{_spread([x['web']['ready_to_web_s'] for x in web], '{:.3f}')} s | |")
    row("idle CPU awake", "{:.3f}", " %", lambda x: x["awake"]["cpu_percent"])
    row(f"wake-ups awake, per {p.idle:g} s", "{:,.0f}", "", lambda x: x["awake"]["wakeups"])
    row("idle CPU asleep", "{:.3f}", " %", lambda x: x["asleep"]["cpu_percent"])
    row(f"wake-ups asleep, per {p.idle:g} s", "{:,.0f}", "", lambda x: x["asleep"]["wakeups"])
    row("wake-ups asleep beyond the watchdog's", "{:,.0f}", "", lambda x: beyond(x["asleep"]))
    row("idle CPU asleep, a live client", "{:.3f}", " %",
        lambda x: x["asleep_client"]["cpu_percent"], lambda x: x["asleep"]["cpu_percent"])
    row(f"wake-ups asleep, a live client, per {p.idle:g} s", "{:,.0f}", "",
        lambda x: x["asleep_client"]["wakeups"], lambda x: x["asleep"]["wakeups"])
    row("wake-ups asleep beyond the watchdog's, a live client", "{:,.0f}", "",
        lambda x: beyond(x["asleep_client"]), lambda x: beyond(x["asleep"]))
    row("resident memory after start", "{:.2f}", " MiB", lambda x: x["rss_start_mib"])
    row(f"resident memory after {p.service_warmup:,} + {p.service_presses:,} presses",
        "{:.2f}", " MiB", lambda x: x["rss_end_mib"])
    w("")


def _startup(r: Any, w: Any) -> None:
    imports = r.details.get("imports")
    if not imports:
        return
    cpu = r.details.get("startup_cpu")
    if cpu:
        res = cpu["result"]
        w("## Start-up CPU, round by round\n")
        w(f"`python -m bench.startup --runs {res['runs']}`: CPU (user + system, of the process "
          "and what it waited for) of `launcher run` from exec to READY and of `launcher "
          "--help`, each divided by the CPU of `python -c pass` in the same round.\n")
        names = list(res["variants"])
        w("| round | `python -c pass` ms | " + " | ".join(
            f"run → READY, {res['variants'][v]['label']}: ms, ratio" for v in names) +
          " | `--help`: ms, ratio |")
        w("|---|---|" + "---|" * len(names) + "---|")
        for i, base in enumerate(res["python_pass_ms"]):
            cells = [f"{res['variants'][v]['cpu_ms'][i]:.1f}, "
                     f"{res['variants'][v]['ratio'][i]:.2f}x" for v in names]
            w(f"| {i + 1} | {base:.1f} | " + " | ".join(cells) +
              f" | {res['help_ms'][i]:.1f}, {res['help_ratio'][i]:.2f}x |")
        w("")
    w("## Start-up imports\n")
    w("The slowest top-level imports (`python -X importtime`, cumulative ms):\n")
    tables = dict(imports)
    if r.details.get("imports_before"):
        tables["launcher --help, before (compare root)"] = r.details["imports_before"]
    for label, rows in tables.items():
        w(f"- {label}: " + ", ".join(f"`{name}` {ms:.1f}" for name, ms in rows))
    if r.details.get("help_before"):
        xs = r.details["help_before"]
        w(f"- `launcher --help` before (compare root): {_spread(xs, '{:.3f}')} s")
    w("")


def _console(r: Any, w: Any) -> None:
    d = r.details.get("console")
    if not d:
        return
    w("## Console, run by run\n")
    w(f"`python -m bench.console --lines {r.plan.console_lines}`: `status` lines written to "
      "a pty as fast as the kernel takes them, the firmware on the real reactor thread; a "
      "probe timer asks to run every 10 ms.\n")
    w("| limits | answered | lines/s | probe lateness idle p50 / max ms | flood p50 / p99 / "
      "max ms | deepest inbox |")
    w("|---|---|---|---|---|---|")
    for label, runs in (("on", d["limited"]), ("lifted", d["lifted"])):
        for x in runs:
            w(f"| {label} | {x['answered']} | {x['lines_per_s']:,.0f} | "
              f"{x['idle_p50_ms']:.2f} / {x['idle_max_ms']:.2f} | {x['flood_p50_ms']:.2f} / "
              f"{x['flood_p99_ms']:.2f} / {x['flood_max_ms']:.2f} | {x['deepest_inbox']} |")
    w("")


def _games(r: Any, w: Any) -> None:
    from bench.games import PEER_NOTES

    d = r.details.get("games")
    if not d:
        return
    w("## Games\n")
    w(f"`python -m bench.games`: each engine plays whole games for {r.plan.engine_seconds:g} "
      "s a run, in alternating slices, in one process; 4 players (heuristic and random "
      "bots) to 500 points, gin 2 heuristic bots to 100; a step is a turn. The "
      "conservation check is off, as in `launcher simulate`.\n")
    w("| engine | games/s | steps/s |")
    w("|---|---|---|")
    for name in d["ours"][0]:
        g = [x[name]["games_per_s"] for x in d["ours"]]
        s = [x[name]["steps_per_s"] for x in d["ours"]]
        w(f"| {name} | {_spread(g, '{:,.1f}')} | {_spread(s, '{:,.0f}')} |")
    w("")
    w("### Against the peers (same process, alternating slices)\n")
    for i, (title, unit) in enumerate((x["title"], x["unit"]) for x in d["peers"][0]):
        w(f"{title}. A step is a turn in ours, one `step`/`apply_action` call in the peers.\n")
        w(f"| engine | {unit}/s | steps/s | ours ÷ this | rules it plays |")
        w("|---|---|---|---|---|")
        runs = [run[i] for run in d["peers"]]
        names = list(runs[0]["results"])
        mine = names[0]
        for name in names:
            g = [x["results"][name]["games_per_s"] for x in runs]
            s = [x["results"][name]["steps_per_s"] for x in runs]
            ratio = [x["results"][mine]["games_per_s"] / x["results"][name]["games_per_s"]
                     for x in runs]
            w(f"| {name} | {_spread(g, '{:,.0f}')} | {_spread(s, '{:,.0f}')} | "
              f"{_spread(ratio, '{:.2f}') if name != mine else ''} | "
              f"{PEER_NOTES.get(name, '')} |")
        for name, why in runs[0]["skipped"].items():
            w(f"| {name} | skipped: {why} | | | {PEER_NOTES.get(name, '')} |")
        w("")


def _jobs(r: Any, w: Any) -> None:
    d = r.details.get("jobs")
    if not d:
        return
    w("## `launcher simulate --jobs N`\n")
    w(f"{r.plan.jobs_games} games of UNO Flip Attack (4 players, direct luck model) through "
      "`launcher.cli.simulate.simulate(..., jobs=N)`; the summary was identical for every N "
      "in every run. 'machine busy' is the whole machine's CPU use meanwhile (/proc/stat), "
      "other engineers' jobs included: a speed-up needs idle cores to use.\n")
    w("| run | " + " | ".join(f"jobs {j}: s, speed-up, machine busy" for j in d["jobs"]) + " |")
    w("|---|" + "---|" * len(d["jobs"]))
    for i, run in enumerate(d["runs"], 1):
        cells = []
        for j in d["jobs"]:
            x = run[j]
            same = "" if x["same_summary"] else " (SUMMARY DIFFERS)"
            cells.append(f"{x['seconds']:.2f} s, {x['speedup']:.2f}x, "
                         f"{x['machine_busy_percent']:.0f}%{same}")
        w(f"| {i} | " + " | ".join(cells) + " |")
    w("")


def _scale(r: Any, w: Any, info: dict[str, Any]) -> None:
    runs = r.details.get("scale")
    if not runs:
        return
    p = r.plan
    w("## Scale: cost against the number of players\n")
    w(f"UNO Flip Attack to 500 points, heuristic and random bots alternating; {p.scale_direct} "
      f"games a run with the direct luck model, {p.scale_firmware} through the firmware; "
      "median of the runs (min–max in the plot). A press is the time of whole games divided "
      "by their presses.\n")
    w("| players | direct ms/game | direct µs/turn | direct µs/press | turns/game | "
      "firmware ms/game | firmware µs/press |")
    w("|---|---|---|---|---|---|---|")
    med = {}
    for players in runs[0]:
        cols = {k: statistics.median(run[players][k] for run in runs) for k in runs[0][players]}
        med[players] = cols
        w(f"| {players} | {cols['direct_ms_per_game']:.1f} | {cols['direct_us_per_turn']:.1f} "
          f"| {cols['direct_us_per_press']:.1f} | {cols['direct_turns_per_game']:.0f} | "
          f"{cols['firmware_ms_per_game']:.1f} | {cols['firmware_us_per_press']:.1f} |")
    w("")
    image = _scale_plot(runs, info.get("out_dir"))
    if image:
        w(f"![cost against players]({image})\n")
    else:
        w("(No plot: matplotlib is not installed.)\n")


def _scale_plot(runs: list[dict], out_dir: Path | None) -> str | None:
    if out_dir is None:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    players = list(runs[0])
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for ax, key, title in ((axes[0], "ms_per_game", "ms per game"),
                           (axes[1], "us_per_press", "µs per press")):
        for kind in ("direct", "firmware"):
            vals = [[run[pl][f"{kind}_{key}"] for run in runs] for pl in players]
            mid = [statistics.median(v) for v in vals]
            lo = [m - min(v) for m, v in zip(mid, vals, strict=True)]
            hi = [max(v) - m for m, v in zip(mid, vals, strict=True)]
            ax.errorbar(players, mid, yerr=[lo, hi], marker="o", capsize=3, label=kind)
        ax.set_xlabel("players")
        ax.set_title(title)
        ax.set_ylim(bottom=0)
        ax.legend()
    fig.tight_layout()
    path = out_dir / "img" / "perf-scale.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return "img/perf-scale.png"


def _profile(r: Any, w: Any) -> None:
    d = r.details.get("profile")
    if not d:
        return
    w("## Profiles of the hot paths\n")
    w("`python -m bench.profile` (cProfile): the functions with the largest own share of each "
      "path's time (cumulative: with what they call).\n")
    for name, prof in d.items():
        w(f"**{name}** ({prof['total_s']:.2f} s profiled)\n")
        w("| function | own | cumulative | calls |")
        w("|---|---|---|---|")
        for row in prof["rows"]:
            w(f"| `{row['function']}` | {row['self_share']:.1%} | "
              f"{row['cumulative_share']:.1%} | {row['calls']:,} |")
        w("")
