"""The circuit campaign (``bench/circuit.py``): every single fault of the circuit against the
real firmware on the simulated launcher. The fast tier here; the full one in
``make test-slow``; its kept results render hardware/SAFETY.md's table
(tests/docs/test_generated.py), so they are checked here against the circuit as it is."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from hal.circuit import circuit
from hal.circuit_faults import NetOpen, NetShort, PartFailure
from launcher.firmware.actuators import Actuators
from launcher.firmware.copper import Copper
from launcher.sim.rig import sim_build

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results" / "circuit_faults.json"


@pytest.fixture
def campaign(bench: Callable[[str], ModuleType]) -> ModuleType:
    return bench("circuit")


@pytest.fixture(autouse=True)
def quiet() -> Iterator[None]:
    logging.disable(logging.CRITICAL)  # each faulted run logs its fault, as it must
    yield
    logging.disable(logging.NOTSET)


def test_the_fast_campaign_holds_and_reports_each_lost_layer(campaign):
    r = campaign.campaign("fast")
    assert r["failures"] == []
    assert r["held"] + len(r["one_barrier"]) + len(r["pi_damaged"]) == r["faults"]
    # Every row that leaves one barrier unreported says why, and the others hold.
    for x in r["rows"]:
        if x["one_barrier"] and not x["reported_in_cycle"] and not campaign.apart(x["verdict"]):
            assert x["one_barrier_why"] and x["verdict"] == campaign.ONE_BARRIER_VERDICT, x
    assert r["roller_worst_ms"] <= 100 and r["turn_worst_ms"] <= 100
    assert r["layers_lost"] >= 10  # the contacts' and nSLEEP's faults are among them
    lost = [x for x in r["rows"] if x["lost"] and x["verdict"] == "held"]
    assert lost and all(x["reported_in_cycle"] or x["unseen"] for x in lost)
    # A layer lost and seen by nothing holds only where its row says why.
    unseen = {x["fault"].split(": ")[-1] for x in r["rows"] if x["unseen"]}
    assert unseen == {"nsleep pulled up", "nsleep ignored"}


def test_the_kept_results_are_the_full_run_of_the_circuit_as_it_is(campaign):
    """Every net and part of each wiring's circuit has its rows, and nothing else does: a
    part added to hal/circuit.py without running the campaign again fails here."""
    r = json.loads(RESULTS.read_text(encoding="utf-8"))
    assert r["tier"] == "full" and r["command"] == campaign.COMMAND
    assert r["failures"] == [] and r["faults"] == len(r["rows"])
    assert r["held"] + len(r["one_barrier"]) + len(r["pi_damaged"]) == r["faults"]
    for wiring in campaign.WIRINGS:
        s = campaign.settings_for(wiring)
        c = circuit(s.pins, sim_build(s.rotator))
        want = sorted(campaign.describe(f, c) for f in campaign.faults_of(wiring))
        assert sorted(x["fault"] for x in r["rows"] if x["wiring"] == wiring) == want
        text = " ".join(want)
        for ref, part in c.parts.items():
            if not part.failure_modes:
                continue  # the Pi: its pins' faults are its nets'
            assert f"{ref} (" in text, f"{wiring}: no row for part {ref}"
        for net in c.nets:
            assert f"{net} open" in text or f"{net} shorted" in text, f"no row for {net}"
        for key in (n.key for n in c.nets.values() if n.gpio is not None):
            for how in ("high", "low"):
                assert f"({key}) damaged: stuck {how}" in text, f"no row for {key} {how}"


def test_the_rows_the_review_found_missing_say_what_they_must():
    r = json.loads(RESULTS.read_text(encoding="utf-8"))
    rows = {(x["wiring"].split(",")[0], x["fault"]): x for x in r["rows"]}
    shared, own = "every pin wired", "the default pins"
    for wiring in (shared, own):
        for contact in ("S3", "S4"):  # the lid's power contact, the rotator's
            for mode in ("welded", "leads pinched", "plunger stuck"):
                [x] = [x for (w, f), x in rows.items()
                       if w == wiring and f.startswith(f"{contact} (") and f.endswith(mode)]
                assert x["lost"] and "power_contact" in x["reported"], x
                assert x["reported_in_cycle"], x
        sleep = rows[(wiring, "motor_sleep shorted to 3V3")]
        assert "the driver's sleep" in sleep["lost"] and "driver_sleep" in sleep["reported"]
        [lever] = [x for (w, f), x in rows.items()
                   if w == wiring and f.startswith("common cause (lid_lever_held)")]
        assert lever["verdict"].startswith("by construction: ") and "apart" in lever["verdict"]
    # The dead-man's one-shot, each failure: Q stuck high is reported at start.
    q = [x for (w, f), x in rows.items() if w == shared and f.endswith("q stuck high")]
    assert q and all("driver_sleep" in x["reported"] for x in q)
    # IN1 stuck high through a flip on the shared driver: the power contact holds it, alone,
    # so its pad's read-back must find it first: at power-on.
    for wiring in (shared, own):
        for net in ("motor_in1", "motor_in2", "rotator"):
            x = rows[(wiring, f"{net} shorted to 3V3")]  # the pad sinks it, driven low
            assert x["roller_ms"] == x["turn_ms"] == 0, x
            assert x["verdict"].startswith("Pi damaged: GPIO "), x
            assert x["reported"] == ["driver_input"] and x["reported_in_cycle"], x
    assert rows[(shared, "motor_in1 shorted to 3V3")]["one_barrier"] == [
        "the roller during a flip: its power contact alone"]
    assert rows[(own, "motor_in1 shorted to 3V3")]["one_barrier"] == []  # its driver sleeps
    # The supplies; the motor pack's brown-out, and its recovery with the lid open (the
    # driver leaving its lockout drives nothing: the firmware stopped on the lid's edge).
    assert sum(1 for (w, f) in rows if f.startswith("the Pi's")) == 4  # two, each wiring
    back = [x for (w, f), x in rows.items() if f.startswith("the motor pack sags")
            and "comes back" in f]
    assert len(back) == 2 and all(x["verdict"] == "held" and x["roller_ms"] == 0
                                  and x["turn_ms"] == 0 for x in back), back


def test_the_campaign_fails_a_firmware_that_does_not_read_the_rotators_contact(
        campaign, monkeypatch):
    """The verdict can fail: without the rotator contact's check a welded S4 (a layer of
    copper gone) goes unreported, as it did before the read-back."""
    monkeypatch.setattr(Copper, "report", lambda self, code, detail: None)
    wiring = next(iter(campaign.WIRINGS))
    fault = PartFailure("S4", "welded")
    r = campaign.run(wiring, fault)
    assert r["lost"] == ["the rotator's full-open contact"]
    assert "unreported" in campaign.verdict(fault, r)
    short = NetShort("motor_sleep", "3V3")
    assert "unreported" in campaign.verdict(short, campaign.run(wiring, short))


@pytest.mark.slow
def test_the_full_campaign_holds(campaign):
    r = campaign.campaign("full")
    assert r["failures"] == []


def test_a_row_whose_check_should_see_its_fault_fails_when_the_check_is_off(
        campaign, monkeypatch):
    """The expected detection comes from the circuit: the NO contact's wire off reads what no
    lid can be (NO and NC both open, the lid shut), so ``lid_sensor`` is due at power-on;
    with the NO/NC check switched off the row that held no longer does (bench/mutants.py
    does the same for every safeguard)."""
    from launcher.firmware.inputs import Inputs

    wiring = next(iter(campaign.WIRINGS))
    fault = NetOpen("lid_closed", 1)
    s = campaign.settings_for(wiring)
    assert campaign.expected(s.pins, sim_build(s.rotator), fault) == {"lid_sensor": "closed"}
    assert campaign.verdict(fault, campaign.run(wiring, fault)) == "held"
    monkeypatch.setattr(Inputs, "implausible", lambda self: False)
    assert "`lid_sensor` (its check sees it with the lid closed) unreported by power-on" in (
        campaign.verdict(fault, campaign.run(wiring, fault)))


def test_the_kept_mutants_are_every_safeguard_of_bench_mutants(bench):
    """docs/results/mutants.json has a verdict for each mutant bench/mutants.py names, and
    the ones it could not catch are said (hardware/SAFETY.md renders them)."""
    mutants = bench("mutants")
    r = json.loads((ROOT / "docs" / "results" / "mutants.json").read_text(encoding="utf-8"))
    assert r["command"] == mutants.COMMAND and r["tier"] == "fast"
    assert [x["mutant"] for x in r["mutants"]] == list(mutants.MUTANTS)
    for x in r["mutants"]:
        assert (x["verdict"] == "caught") == bool(x["by"]), x
    assert r["caught"] == sum(x["verdict"] == "caught" for x in r["mutants"])
    assert r["failures"] == [f"{x['mutant']}: NOT caught" for x in r["mutants"]
                             if x["verdict"] != "caught"]


def test_a_contact_gone_leaves_the_lid_stop_on_the_pin_thread_as_the_layer(campaign,
                                                                          monkeypatch):
    """A welded S3 takes the power contact away: the roller is stopped on the lid's edge by
    the pin thread's stop, before the event loop runs; without that stop the reactor (at the
    edge's own instant on the manual clock) would still stop it, and the row fails."""
    wiring = next(iter(campaign.WIRINGS))
    fault = PartFailure("S3", "welded")
    r = campaign.run(wiring, fault)
    assert r["lost"] == ["the power contact"] and r["after_edge"] == []
    assert campaign.verdict(fault, r) == "held"
    monkeypatch.setattr(Actuators, "lid_left", lambda self: None)
    r = campaign.run(wiring, fault)
    assert r["after_edge"] == ["roller"] and r["roller_ms"] == 0
    assert "the roller still turning once the lid's edge was delivered" in (
        campaign.verdict(fault, r))
    assert 0 < campaign.lid_stop_bound_ms() < 1


def test_a_driver_awake_while_the_pi_boots_is_a_layer_lost(campaign, bench):
    """nSLEEP's pull-down open: on the default pins (GPIO 11, pulled down at power-on) the
    driver still sleeps while the Pi boots; moved to GPIO 4 (pulled up) with the pin rule off
    (bench/mutants.py's mutant), it is awake then and nothing reports it, so the row fails.
    With the rule on, the campaign refuses that wiring. A breakout's pull-up, which no check
    can see, holds only with its reason in the row."""
    from launcher.core.config import ConfigError

    mutants = bench("mutants")
    wiring = mutants.DEFAULT_PINS
    fault = PartFailure("R3", "open")
    r = campaign.run(wiring, fault)
    assert r["lost"] == [] and campaign.verdict(fault, r) == "held"
    name = next(n for n in mutants.MUTANTS if n.startswith("the pin rules"))
    with mutants.MUTANTS[name]():
        assert campaign.settings_for(wiring).pins.motor_sleep == 4
        r = campaign.run(wiring, fault)
    assert r["lost"] == ["the power-on pulls"]
    assert "took away the power-on pulls, unreported" in campaign.verdict(fault, r)
    moved = {**campaign.WIRINGS[wiring], "motor_sleep": 4}
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(campaign.WIRINGS, wiring, moved)
        with pytest.raises(ConfigError, match="GPIO 4 is pulled up at power-on"):
            campaign.settings_for(wiring)
    pulled = PartFailure("U1", "nsleep_pulled_up")
    r = campaign.run(wiring, pulled)
    assert r["lost"] == ["the power-on pulls"] and r["reported"] == []
    assert campaign.verdict(pulled, r) == "held" and r["unseen"] == campaign.UNSEEN[pulled]
    assert "no check can see it" in campaign._reported(r)


def test_a_card_shot_with_no_press_asking_fails_the_row(campaign, monkeypatch):
    """The unexpected start is a hazard: a card that leaves in a phase where the scenario
    pressed nothing fails the row. Counted as unasked, the shot's own cards fail it."""
    wiring = next(iter(campaign.WIRINGS))
    fault = NetShort("button", "GND")  # the button held from power-on: no shot from it
    r = campaign.run(wiring, fault)
    assert r["unasked"] == {} and campaign.verdict(fault, r) == "held"
    monkeypatch.setattr(campaign, "PRESSED", ("the lid opened mid-shot",))
    r = campaign.run(wiring, None)  # the healthy unit: its shot counted as nobody's
    assert r["unasked"].get("a shot", 0) >= 1
    assert "shot with no press asking (a shot): an unexpected start" in (
        campaign.verdict(fault, r))


def test_the_faults_the_review_added(campaign):
    """GPIO 2 (header pin 3, beside the 5 V pin 4) can short to 5 V, and only it; a driver
    that ignores nSLEEP takes its sleep away, seen by nothing, and its row says why."""
    from hal.circuit import beside_5v, header_neighbours

    assert header_neighbours(4) == {2, 3, 6} and header_neighbours(1) == {2, 3}
    assert [b for b in range(28) if beside_5v(b)] == [2]
    wiring = next(iter(campaign.WIRINGS))
    short = NetShort("rotator_contact_sense", "5V")
    assert short in campaign.faults_of(wiring)
    r = campaign.run(wiring, short)
    assert "power_contact" in r["reported"] and campaign.verdict(short, r).startswith(
        "Pi damaged: GPIO 2 (rotator_contact_sense) held past its 3.3 V rail, into its clamp")
    ignored = PartFailure("U1", "nsleep_ignored")
    r = campaign.run(wiring, ignored)
    assert "the driver's sleep" in r["lost"] and r["reported"] == []
    assert campaign.verdict(ignored, r) == "held" and "not practicable" in r["unseen"]


def test_a_fault_that_leaves_one_barrier_unreported_fails_unless_its_row_says_why(
        campaign, bench, monkeypatch):
    """The judge of the single-barrier stretch: IN1 held high on the shared driver leaves the
    roller's power contact alone during a flip (the driver awake, the lid open). Its pad's
    read-back reports it at power-on, and the row holds; with that check off, the row fails
    for the barrier left (and not only for the late report: with the expected reports
    emptied it still fails, and holds only with the judge off too). The MOSFET's shorted
    rotator switch, which no check sees, is counted apart only while its row says why."""
    wiring, own = list(campaign.WIRINGS)
    fault = NetShort("motor_in1", "3V3")
    s = campaign.settings_for(wiring)
    model = bench("circuit_model")
    good = model.barriers(s.pins, sim_build(s.rotator), None)
    assert good["the roller during a flip"] == [model.INPUTS, model.CONTACT]
    assert len(good["the roller at rest, the lid open"]) == 3
    r = campaign.run(wiring, fault)
    assert r["one_barrier"] == ["the roller during a flip: its power contact alone"]
    held = "Pi damaged: GPIO 12 (motor_in1) sinking, driven low, 110 mA, past 16 mA"
    assert r["reported_in_cycle"] and campaign.verdict(fault, r).startswith(held)
    left = ("left the roller during a flip: its power contact alone, unreported in the first "
            "lid cycle")
    monkeypatch.setattr(Copper, "pads_low", lambda self: True)  # the pads not read
    monkeypatch.setattr(campaign, "expected", lambda pins, build, f: {})
    r = campaign.run(wiring, fault)
    assert r["reported"] == [] and campaign.verdict(fault, r) == left
    assert not campaign.passed(campaign.verdict(fault, r))
    monkeypatch.setattr(campaign, "one_barrier", lambda pins, build, f: [])  # the judge off
    assert campaign.verdict(fault, campaign.run(wiring, fault)).startswith(held)
    monkeypatch.undo()
    q1 = PartFailure("Q1", "shorted")
    r = campaign.run(own, q1)
    assert r["reported"] == [] and r["one_barrier"] and r["one_barrier_why"]
    assert campaign.verdict(q1, r) == campaign.ONE_BARRIER_VERDICT
    monkeypatch.delitem(campaign.ONE_BARRIER, q1)
    assert campaign.verdict(q1, r).startswith("left the rotator at rest")


def test_a_fault_that_overstresses_the_pi_is_judged_pi_damaged(campaign, monkeypatch):
    """The Pi's pads and its 3.3 V rail have limits (hal/datasheets.py): the motor supply
    shorted to 3V3 feeds the rail, IN1 shorted to VM sinks the pad past its 16 mA, GPIO 2
    shorted to 5 V drives its clamp. The motors held, so each is no failure, but it is not
    "held" either: counted apart, the row says where. With the clamp model off the 5 V short
    would be judged held."""
    from hal import electrical
    from hal.electrical import Evaluation

    wiring = next(iter(campaign.WIRINGS))
    for fault, where in ((NetShort("VM", "3V3"), "the Pi's 3.3 V rail fed from the copper"),
                         (NetShort("motor_in1", "VM"), "GPIO 12 (motor_in1) sinking"),
                         (NetShort("rotator_contact_sense", "5V"), "GPIO 2")):
        v = campaign.verdict(fault, campaign.run(wiring, fault))
        assert v.startswith("Pi damaged: ") and where in v and campaign.passed(v), v
        assert campaign.damaged(v) and v != "held"
    short = NetShort("rotator_contact_sense", "5V")
    monkeypatch.setattr(Evaluation, "_clamps", lambda self, volts: ())
    monkeypatch.setattr(electrical, "_SHARED", {})  # no solution kept from before
    assert campaign.verdict(short, campaign.run(wiring, short)) == "held"


def test_a_damaged_pi_never_hides_a_failure_of_the_motors(campaign):
    """The judge puts a safety function's failure first: the same row with the roller
    driven past the lease is a failure, not "Pi damaged"."""
    wiring = next(iter(campaign.WIRINGS))
    fault = NetShort("motor_in1", "VM")
    r = campaign.run(wiring, fault)
    assert r["damaged"] and campaign.damaged(campaign.verdict(fault, r))
    r = {**r, "roller_ms": r["lease_ms"] + 50.0, "roller_phase": "a flip"}
    v = campaign.verdict(fault, r)
    assert v.startswith("the roller driven with the lid open") and not campaign.passed(v)


def test_every_wired_pin_damaged_each_way_is_a_fault_of_its_own(campaign):
    """What a damaged pad then does (stuck at a rail, driving nothing) is enumerated for
    every pin of each wiring, and runs as any other fault: IN1 stuck high is seen by its
    pad's read-back at power-on, the lid switch's pin stuck low by the NO/NC check."""
    from hal.circuit_faults import PinDamaged

    wiring = next(iter(campaign.WIRINGS))
    s = campaign.settings_for(wiring)
    pins = {getattr(s.pins, r) for r in ("motor_in1", "lid_closed", "button", "led")}
    faults = campaign.faults_of(wiring)
    assert {PinDamaged(p, m) for p in pins for m in ("stuck_high", "stuck_low")} <= set(faults)
    high = PinDamaged(s.pins.motor_in1, "stuck_high")
    r = campaign.run(wiring, high)
    assert r["reported"] == ["driver_input"] and r["reported_in_cycle"]
    assert campaign.verdict(high, r) == "held"
    low = PinDamaged(s.pins.lid_closed, "stuck_low")
    r = campaign.run(wiring, low)
    assert "lid_sensor" in r["reported"] and campaign.verdict(low, r) == "held"
