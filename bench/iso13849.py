"""An ISO 13849-1 estimate of the two safety functions, from the parts' failure rates
(hal/reliability.py) and the circuit campaign's kept rows (docs/results/circuit_faults.json):
hardware/SAFETY.md's section (``python docs/blocks.py --print iso13849``).

For each function and each wiring the campaign ran: each channel's MTTFd (its parts'
rates summed, capped at 100 years), the two channels made one (the standard's formula for
unequal channels), DCavg (each part's share of its dangerous failure modes that the unit
reported by the end of the first lid cycle, in the campaign's rows, weighted by the part's
failure rate), the CCF score, and the Performance Level the simplified method gives.
An estimate from simulation and data sheets, not a certification.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from hal.circuit import PI, Circuit, circuit
from hal.circuit_faults import PartFailure
from hal.reliability import (
    CCF,
    CCF_NEEDED,
    EDITION,
    FUNCTIONS,
    PI_DC,
    PI_DC_BASIS,
    RATES,
    SOURCES,
    USAGE,
    Function,
    Usage,
    channels,
    judged,
    mttfd_years,
    rate_of,
)

# --- the standard's arithmetic (ISO 13849-1:2015), pure ------------------------------------

CAP_YEARS = 100.0  # a channel's MTTFd, Category 3 (4.5.2)


def mttfd_from_b10d(b10d: float, n_op: float) -> float:
    """C.4: years to a dangerous failure of a part that wears ``n_op`` operations a year."""
    return b10d / (0.1 * n_op)


def channel_mttfd(parts: Iterable[float]) -> float:
    """D.1 (parts count): a channel fails when any of its parts does; uncapped."""
    return 1.0 / sum(1.0 / m for m in parts)


def capped(years: float) -> float:
    return min(years, CAP_YEARS)


def symmetrised(c1: float, c2: float) -> float:
    """D.2: two channels of unequal MTTFd as one figure (each capped first)."""
    return 2.0 / 3.0 * (c1 + c2 - 1.0 / (1.0 / c1 + 1.0 / c2))


def dcavg(parts: Iterable[tuple[float, float]]) -> float:
    """E.2: the parts' DC weighted by their failure rates: sum(DC/MTTFd) / sum(1/MTTFd), for
    (DC, MTTFd) pairs."""
    pairs = list(parts)
    return sum(dc / m for dc, m in pairs) / sum(1.0 / m for _, m in pairs)


def dc_level(dc: float) -> str:
    """Table 5: none below 60 %, low to 90 %, medium to 99 %, high from 99 %."""
    for floor, name in ((0.99, "high"), (0.90, "medium"), (0.60, "low")):
        if dc >= floor:
            return name
    return "none"


def mttfd_level(years: float) -> str:
    """Table 4: low from 3 years, medium from 10, high from 30 (to the cap); below 3 years is
    not enough for any category."""
    for floor, name in ((30.0, "high"), (10.0, "medium"), (3.0, "low")):
        if years >= floor:
            return name
    return "too low"


# Figure 5, Category 3's two columns (DCavg low and medium): the PL for each MTTFd level.
CATEGORY_3 = {"low": {"low": "b", "medium": "c", "high": "d"},
              "medium": {"low": "c", "medium": "d", "high": "d"}}


class Verdict(NamedTuple):
    category: str
    pl: str | None
    why: str


def performance_level(mttfd: float, dc: float, ccf: int) -> Verdict:
    """The simplified method (6.2.5, Figure 5) for a two-channel design: Category 3 if its
    conditions hold (DCavg at least low, a CCF score of 65, MTTFd at least low), else what
    the design falls to. A DCavg of 99 % or more is read in Category 3's medium column."""
    level, cover = mttfd_level(mttfd), dc_level(dc)
    if level == "too low":
        return Verdict("none", None, f"MTTFd {mttfd:.1f} years is under the 3 years of any "
                                     "category")
    missing = []
    if cover == "none":
        missing.append(f"DCavg {dc:.0%} < 60 %")
    if ccf < CCF_NEEDED:
        missing.append(f"CCF {ccf} < {CCF_NEEDED}")
    if missing:
        # Category B: no diagnostics or CCF asked, MTTFd low or medium: PL a or b.
        return Verdict("B", "a" if level == "low" else "b",
                       "not Category 3: " + "; ".join(missing) + "; Category B's PL is a or b")
    column = CATEGORY_3["medium" if cover == "high" else cover]
    return Verdict("3", column[level], f"Category 3, DCavg {cover}, MTTFd {level}")


# --- from the campaign's rows --------------------------------------------------------------


def detected(row: Mapping[str, Any]) -> bool:
    """A fault the unit reported by the end of the first lid cycle: at or before the next
    demand, as Category 3 asks (a report later does not count)."""
    return bool(row["reported"]) and bool(row["reported_in_cycle"])


class Mode(NamedTuple):
    mode: str
    dangerous: bool
    why: str
    detected: bool
    by: tuple[str, ...]  # the fault codes reported


class PartEstimate(NamedTuple):
    ref: str
    name: str
    mttfd: float  # the part's own, uncapped
    basis: str
    modes: tuple[Mode, ...]
    dc: float

    @property
    def dangerous(self) -> tuple[Mode, ...]:
        return tuple(m for m in self.modes if m.dangerous)


def part_estimate(c: Circuit, ref: str, rows: Mapping[str, Mapping[str, Any]], motor: str,
                  usage: Usage = USAGE) -> PartEstimate:
    """One part of a channel: its MTTFd and the DC its dangerous modes' rows give (modes
    taken as equally likely; the Pi, which the campaign does not fail, by its estimate)."""
    part = c.parts[ref]
    r = rate_of(part)
    basis = r.what + (" (an estimate)" if r.estimate else "")
    if part.kind == PI:
        return PartEstimate(ref, part.name, mttfd_years(part, usage), basis, (), PI_DC)
    modes = []
    for mode in part.failure_modes:
        description = PartFailure(ref, mode).describe(c)
        if description not in rows:
            raise KeyError(f"no campaign row for {description!r}: run the circuit campaign "
                           "again (hardware/SAFETY.md, The table)")
        row = rows[description]
        j = judged(part, mode, motor)
        modes.append(Mode(mode, j.dangerous, j.why, detected(row), tuple(row["reported"])))
    bad = [m for m in modes if m.dangerous]
    dc = sum(m.detected for m in bad) / len(bad) if bad else 0.0
    return PartEstimate(ref, part.name, mttfd_years(part, usage), basis, tuple(modes), dc)


class FunctionEstimate(NamedTuple):
    function: Function
    wiring: str
    channels: tuple[tuple[PartEstimate, ...], tuple[PartEstimate, ...]]
    channel_mttfd: tuple[float, float]  # capped
    mttfd: float
    dcavg: float
    ccf: int
    verdict: Verdict


def ccf_score() -> int:
    return sum(m.claimed for m in CCF)


def function_estimate(f: Function, c: Circuit, rows: Mapping[str, Mapping[str, Any]],
                      wiring: str, usage: Usage = USAGE) -> FunctionEstimate:
    parts = tuple(tuple(part_estimate(c, ref, rows, f.motor, usage) for ref in refs)
                  for refs in channels(f, c))
    ch1, ch2 = (capped(channel_mttfd(p.mttfd for p in ch)) for ch in parts)
    mttfd = symmetrised(ch1, ch2)
    dc = dcavg((p.dc, p.mttfd) for ch in parts for p in ch)
    score = ccf_score()
    return FunctionEstimate(f, wiring, (parts[0], parts[1]), (ch1, ch2), mttfd, dc, score,
                            performance_level(mttfd, dc, score))


def unit(wiring: str) -> Circuit:
    """The circuit of one of the campaign's wirings, as the campaign built it."""
    from bench.circuit import settings_for
    from launcher.sim.rig import sim_build

    s = settings_for(wiring)
    return circuit(s.pins, sim_build(s.rotator))


def estimate(r: Mapping[str, Any], usage: Usage = USAGE) -> list[FunctionEstimate]:
    """Each function on each wiring of the kept campaign ``r``."""
    out = []
    for wiring in r["wirings"]:
        rows = {x["fault"]: x for x in r["rows"] if x["wiring"] == wiring}
        c = unit(wiring)
        out += [function_estimate(f, c, rows, wiring, usage) for f in FUNCTIONS]
    return out


# --- SAFETY.md's section ---------------------------------------------------------------------


def _years(y: float) -> str:
    return f"{y:,.0f}" if y >= 100 else f"{y:.1f}"


def _modes_cell(p: PartEstimate) -> str:
    if not p.modes:
        return "not failed by the campaign: DC an estimate (below)"
    cells = []
    for m in p.dangerous:
        seen = (f"reported (`{'`, `'.join(m.by)}`)" if m.detected else
                f"reported only later (`{'`, `'.join(m.by)}`)" if m.by else "unreported")
        cells.append(f"{m.mode.replace('_', ' ')}: {seen}")
    return "; ".join(cells) or "none dangerous"


def markdown(r: Mapping[str, Any], usage: Usage = USAGE) -> str:
    """The estimate's section: the use assumed, the parts of each channel, the result for each
    function and wiring, the CCF checklist, the sources."""
    found = estimate(r, usage)
    out = [
        f"Edition followed: {EDITION} (a channel's MTTFd capped at {CAP_YEARS:.0f} years, "
        "Category 3). The campaign: "
        f"`{r['command']}` (finished {r['date']}).",
        "",
        f"Use assumed (`hal.reliability.USAGE`): {usage.games_per_day} games a day, "
        f"{usage.days_per_year} days a year, {usage.lid_cycles_per_game} lid cycles a game "
        f"(n_op = {usage.lid_cycles_per_year:,} operations a year of each switch the lid "
        f"works; {usage.presses_per_game} presses a game wear no part of these functions).",
        "",
        "| function | wiring | channel 1 (copper) MTTFd | channel 2 (firmware) MTTFd | "
        "MTTFd, both channels | DCavg | CCF | category | PL estimate | PL with a CCF score "
        f"of {CCF_NEEDED} |",
        "|---|---|---:|---:|---:|---:|---:|---|---|---|",
    ]
    for e in found:
        v = e.verdict
        ch1 = " + ".join(p.ref for p in e.channels[0])
        ch2 = " + ".join(p.ref for p in e.channels[1])
        met = performance_level(e.mttfd, e.dcavg, max(e.ccf, CCF_NEEDED))
        out.append(
            f"| {e.function.name} | {e.wiring} | {ch1}: {_years(e.channel_mttfd[0])} years | "
            f"{ch2}: {_years(e.channel_mttfd[1])} years | {_years(e.mttfd)} years "
            f"({mttfd_level(e.mttfd)}) | {e.dcavg:.1%} ({dc_level(e.dcavg)}) | {e.ccf} | "
            f"{v.category} ({v.why}) | **{v.pl}** | {met.pl} ({met.why}) |")
    out += ["", "Each channel's parts, their MTTFd (uncapped), and their dangerous failure modes "
            "in the campaign's rows (reported by the end of the first lid cycle, or not):", ""]
    out += ["| function | wiring | part | MTTFd | from | dangerous modes in the campaign | DC |",
            "|---|---|---|---:|---|---|---:|"]
    for e in found:
        for ch in e.channels:
            for p in ch:
                out.append(f"| {e.function.key} | {e.wiring} | {p.ref} ({p.name}) | "
                           f"{_years(p.mttfd)} years | {p.basis} | {_modes_cell(p)} | "
                           f"{p.dc:.0%} |")
    out += ["", "The failure rates that are estimates, and the basis of each:", ""]
    seen: set[str] = set()
    for rate in RATES.values():
        if rate.estimate and rate.what not in seen:
            seen.add(rate.what)
            out.append(f"- {rate.what}: {rate.estimate} (source `{rate.source}`).")
    out.append(f"- The Pi's DC: {PI_DC_BASIS}.")
    out += ["", f"Measures against common cause failure (Annex F; {CCF_NEEDED} needed):", "",
            "| measure | points | claimed | why |", "|---|---:|---:|---|"]
    out += [f"| {m.name} | {m.points} | {m.claimed} | {m.why} |" for m in CCF]
    out.append(f"| **total** | {sum(m.points for m in CCF)} | **{ccf_score()}** | |")
    out += ["", "Sources (`hal.reliability.SOURCES`):", ""]
    out += [f"- `{key}`: {text}" for key, text in SOURCES.items()]
    return "\n".join(out) + "\n"
