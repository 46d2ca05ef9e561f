"""The ISO 13849-1 estimate (bench/iso13849.py, hal/reliability.py): its arithmetic against
figures worked by hand, the simplified method's table at its edges, and its diagnostic
coverage from the campaign's rows (a fault counts as detected only when the unit reported it
by the end of the first lid cycle). That hardware/SAFETY.md's section is what the generator
prints from the kept rows is tests/docs/test_generated.py's."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from hal import reliability as rel
from hal.circuit_faults import PartFailure

ROOT = Path(__file__).resolve().parents[2]
KEPT = json.loads((ROOT / "docs" / "results" / "circuit_faults.json").read_text())
DEFAULT = "the default pins, the rotator on its own MOSFET"


@pytest.fixture
def iso(bench):
    return bench("iso13849")


def test_mttfd_from_b10d_and_the_cap_as_a_maker_s_worked_example_has_them(iso):
    # LinMot's C1100 guide: B10d 20,000,000, a demand every 20 s all year round
    # (1,577,880 operations) is 126.75 years, counted as 100.
    n_op = 24 * 365.25 * 3600 / 20
    assert n_op == pytest.approx(1_577_880)
    assert iso.mttfd_from_b10d(20e6, n_op) == pytest.approx(126.75, abs=0.005)
    assert iso.capped(126.75) == 100.0 and iso.capped(99.0) == 99.0
    # The power contact: 200,000 over 0.1 × 6,570 lid cycles a year.
    assert iso.mttfd_from_b10d(200_000, 6_570) == pytest.approx(304.41, abs=0.01)


def test_a_channel_fails_when_any_of_its_parts_does(iso):
    assert iso.channel_mttfd([10.0, 10.0]) == pytest.approx(5.0)
    assert iso.channel_mttfd([10.0, 1e9]) == pytest.approx(10.0)
    assert iso.channel_mttfd([20.0, 30.0, 60.0]) == pytest.approx(10.0)


def test_two_unequal_channels_make_one_figure_by_the_standard_s_formula(iso):
    assert iso.symmetrised(100.0, 100.0) == pytest.approx(100.0)
    assert iso.symmetrised(30.0, 30.0) == pytest.approx(30.0)
    # 2/3 × (100 + 10 − 1/(1/100 + 1/10)) = 2/3 × (110 − 9.0909...) = 67.27
    assert iso.symmetrised(100.0, 10.0) == pytest.approx(67.27, abs=0.005)


def test_dcavg_weighs_each_part_by_its_failure_rate(iso):
    assert iso.dcavg([(1.0, 100.0), (0.0, 100.0)]) == pytest.approx(0.5)
    # A part failing ten times as often counts ten times: (0/10 + 1/100) / (1/10 + 1/100).
    assert iso.dcavg([(0.0, 10.0), (1.0, 100.0)]) == pytest.approx(1 / 11)
    assert iso.dcavg([(0.6, 10.0), (1.0, 304.0)]) == pytest.approx(
        (0.06 + 1 / 304) / (0.1 + 1 / 304))


@pytest.mark.parametrize(("dc", "level"), [
    (0.0, "none"), (0.5999, "none"), (0.60, "low"), (0.8999, "low"), (0.90, "medium"),
    (0.9899, "medium"), (0.99, "high"), (1.0, "high")])
def test_dc_levels_at_their_edges(iso, dc, level):
    assert iso.dc_level(dc) == level


@pytest.mark.parametrize(("years", "level"), [
    (2.99, "too low"), (3.0, "low"), (9.99, "low"), (10.0, "medium"), (29.99, "medium"),
    (30.0, "high"), (100.0, "high")])
def test_mttfd_levels_at_their_edges(iso, years, level):
    assert iso.mttfd_level(years) == level


@pytest.mark.parametrize(("mttfd", "dc", "ccf", "category", "pl"), [
    # Category 3, DCavg low: b, c, d for MTTFd low, medium, high, at each band's edges.
    (3.0, 0.60, 65, "3", "b"), (9.99, 0.8999, 65, "3", "b"), (10.0, 0.60, 65, "3", "c"),
    (29.99, 0.60, 65, "3", "c"), (30.0, 0.60, 65, "3", "d"), (100.0, 0.8999, 100, "3", "d"),
    # DCavg medium: c, d, d; a DCavg of 99 % or more reads in the medium column.
    (3.0, 0.90, 65, "3", "c"), (10.0, 0.90, 65, "3", "d"), (30.0, 0.9899, 65, "3", "d"),
    (9.99, 0.99, 65, "3", "c"), (100.0, 1.0, 65, "3", "d"),
    # Category 3's conditions not met: Category B, a or b.
    (100.0, 0.5999, 65, "B", "b"), (100.0, 0.95, 64, "B", "b"), (9.99, 0.95, 64, "B", "a"),
    (10.0, 0.0, 0, "B", "b"),
    # Under 3 years no category applies.
    (2.99, 0.95, 65, "none", None)])
def test_the_simplified_method_at_the_table_s_edges(iso, mttfd, dc, ccf, category, pl):
    v = iso.performance_level(mttfd, dc, ccf)
    assert (v.category, v.pl) == (category, pl), v.why


def test_a_fault_counts_as_detected_only_when_reported_by_the_first_lid_cycle(iso):
    assert iso.detected({"reported": ["power_contact"], "reported_in_cycle": True})
    assert not iso.detected({"reported": ["lid_sensor"], "reported_in_cycle": False})
    assert not iso.detected({"reported": [], "reported_in_cycle": False})


def _rows(c, reports: dict[tuple[str, str], tuple[list[str], bool]]) -> dict[str, dict]:
    """A made-up campaign for the unit ``c``: every part failure unreported, but those
    ``reports`` names (reported codes, within the first lid cycle or not)."""
    rows = {}
    for part in c.parts.values():
        for mode in part.failure_modes:
            got, in_cycle = reports.get((part.ref, mode), ([], False))
            rows[PartFailure(part.ref, mode).describe(c)] = {
                "reported": got, "reported_in_cycle": in_cycle}
    return rows


def test_a_part_s_dc_is_its_dangerous_modes_reported_in_time_and_dcavg_weighs_them(iso):
    c = iso.unit(DEFAULT)
    roller = rel.FUNCTIONS[0]
    rows = _rows(c, {("S3", "welded"): (["power_contact"], True),
                     ("S3", "plunger_stuck"): (["power_contact"], False),  # too late
                     ("S3", "open"): (["power_contact"], True),  # safe: not counted
                     ("U1", "nsleep_ignored"): (["driver_sleep"], True),
                     ("U1", "bout1_stuck_high"): (["power_contact"], True)})  # the rotator's
    e = iso.function_estimate(roller, c, rows, DEFAULT)
    parts = {p.ref: p for ch in e.channels for p in ch}
    assert [p.ref for p in e.channels[0]] == ["S3"]
    assert [p.ref for p in e.channels[1]] == ["S1", "PI", "U1"]
    # S3: welded, leads pinched, plunger stuck are dangerous; only the weld was in time.
    assert [m.mode for m in parts["S3"].dangerous] == ["welded", "leads_pinched",
                                                       "plunger_stuck"]
    assert parts["S3"].dc == pytest.approx(1 / 3)
    # U1 for the roller: aout1/aout2 stuck high and both nSLEEP modes; one of four reported.
    assert {m.mode for m in parts["U1"].dangerous} == {
        "aout1_stuck_high", "aout2_stuck_high", "nsleep_pulled_up", "nsleep_ignored"}
    assert parts["U1"].dc == pytest.approx(1 / 4)
    assert parts["S1"].dc == 0.0
    assert parts["PI"].dc == rel.PI_DC
    # DCavg by hand from the parts' own MTTFd.
    m = {ref: rel.mttfd_years(c.parts[ref]) for ref in ("S3", "S1", "PI", "U1")}
    dc = {"S3": 1 / 3, "S1": 0.0, "PI": rel.PI_DC, "U1": 1 / 4}
    assert e.dcavg == pytest.approx(sum(dc[r] / m[r] for r in m) / sum(1 / m[r] for r in m))
    # The channels: S3 alone, capped; the firmware's parts summed.
    assert e.channel_mttfd[0] == min(100.0, m["S3"])
    assert e.channel_mttfd[1] == pytest.approx(1 / (1 / m["S1"] + 1 / m["PI"] + 1 / m["U1"]))


def test_a_new_failure_mode_must_be_judged_before_it_counts(iso):
    c = iso.unit(DEFAULT)
    with pytest.raises(KeyError, match="not judged"):
        rel.judged(c.parts["U1"]._replace(kind="driver"), "melted", rel.ROLLER)


def test_a_campaign_without_a_row_for_a_channel_s_fault_is_refused(iso):
    c = iso.unit(DEFAULT)
    rows = _rows(c, {})
    del rows[PartFailure("S3", "welded").describe(c)]
    with pytest.raises(KeyError, match="run the circuit campaign again"):
        iso.function_estimate(rel.FUNCTIONS[0], c, rows, DEFAULT)


def test_the_kept_estimate_moves_with_the_campaign_s_rows(iso):
    """The section is the kept rows' consequence: an unreported dangerous fault counted as
    reported (the mutant a wrong reading of the rows would make) raises the DCavg."""
    before = {(e.wiring, e.function.key): e.dcavg for e in iso.estimate(KEPT)}
    r = copy.deepcopy(KEPT)
    (row,) = [x for x in r["rows"] if x["wiring"] == DEFAULT
              and x["fault"].startswith("U1 ") and x["fault"].endswith(": nsleep ignored")]
    assert row["reported"] == []  # the kept campaign: nothing sees it
    row["reported"], row["reported_in_cycle"] = ["driver_sleep"], True
    after = {(e.wiring, e.function.key): e.dcavg for e in iso.estimate(r)}
    assert after[(DEFAULT, "roller")] > before[(DEFAULT, "roller")]
    assert iso.markdown(r) != iso.markdown(KEPT)


def test_every_figure_names_its_source_and_every_estimate_its_basis(iso):
    for rate in rel.RATES.values():
        assert rate.source in rel.SOURCES
        assert (rate.b10d is None) != (rate.mttfd_years is None)
    # The Pi has no maker's figure: an estimate, said so.
    assert rel.RATES[rel.PI].estimate and "estimate" in rel.PI_DC_BASIS


def test_the_ccf_score_claims_a_measure_in_full_or_not_at_all_and_says_why(iso):
    assert sum(m.points for m in rel.CCF) == 100
    for m in rel.CCF:
        assert m.claimed in (0, m.points), m.name
        assert m.why
        if m.claimed:  # a claim names what in the repository backs it, and it exists
            paths = re.findall(r"\b[\w-]+/[\w./-]+\.(?:md|py)\b", m.why)
            assert paths and all((ROOT / p).exists() for p in paths), m.name
        else:
            assert m.why.startswith("scored 0"), m.name
    assert iso.ccf_score() == sum(m.claimed for m in rel.CCF)


def test_safety_md_says_it_is_an_estimate_and_what_a_builder_would_measure(iso):
    text = (ROOT / "hardware" / "SAFETY.md").read_text(encoding="utf-8")
    _, _, rest = text.partition("## ISO 13849-1: an estimate")
    section = rest.partition("\n## ")[0]
    assert "not a certification" in section and "a builder would have to" in section
    assert "<!-- generated by: python docs/blocks.py --print iso13849 -->" in section
    for f in rel.FUNCTIONS:
        assert f"| {f.name} |" in section


def test_safety_md_s_words_on_the_result_are_what_the_kept_estimate_says(iso):
    """The prose around the generated section names no figure, but says why the PL is what
    it is: it must still be so."""
    text = (ROOT / "hardware" / "SAFETY.md").read_text(encoding="utf-8")
    found = iso.estimate(KEPT)
    held_by_ccf = "the common cause score is what holds the design below Category 3" in text
    assert held_by_ccf == (iso.ccf_score() < rel.CCF_NEEDED)
    assert held_by_ccf == all(e.verdict.category == "B" for e in found)
    if "DCavg is low because" in text:
        assert {iso.dc_level(e.dcavg) for e in found} == {"low"}
        for e in found:  # the driver's undetected faults, the Pi the most often failing part
            parts = {p.ref: p for ch in e.channels for p in ch}
            assert "U1" not in parts or parts["U1"].dc < 1.0
            assert min(parts.values(), key=lambda p: p.mttfd).ref == "PI"
