"""A deliberately stalled guest, run only on request (``bash .ci/kernel/stall-probe``).

It proves the tier's stall diagnosis (.ci/kernel/stallwatch, .ci/kernel/guest-watch, the
guest kernel's console) works: the test stops its own pytest process with SIGSTOP, the way
the stalls seen before looked from outside (no test finished, and not even faulthandler's
dump was written, since a stopped process runs nothing). Nothing in the guest's user space
can then report; the host's watch must find the stall and collect the kernel log, every
task's stack and the vCPUs' registers on its own. The probe script checks they are there.
"""

from __future__ import annotations

import os
import signal

import pytest

PROBE = os.environ.get("KERNEL_STALL_PROBE") == "1"  # "patch": the second probe below


@pytest.mark.skipif(not PROBE, reason="the stall probe runs only on request: "
                    "bash .ci/kernel/stall-probe")
def test_a_stopped_pytest_is_diagnosed_from_outside() -> None:
    print("stall probe: pytest stops itself now", flush=True)
    os.kill(os.getpid(), signal.SIGSTOP)
    pytest.fail("the stall probe's pytest ran again: nothing should have continued it")


PATCH_PROBE = os.environ.get("KERNEL_STALL_PROBE") == "patch"
TOGGLES = 2000


@pytest.mark.skipif(not PATCH_PROBE, reason="the live-patching probe runs only on request: "
                    "KERNEL_STALL_PROBE=patch bash .ci/kernel/run .venv "
                    "tests/kernel/test_stall_probe.py")
def test_tracepoints_switched_on_and_off_under_load_wedge_the_guest() -> None:
    """What the tier did before the trace was set up once (docs/kernel-tier.md): switch the
    gpio_value event on and off, record-tgid on (so sched_switch's tracepoint is switched
    with it), while lgpio's PWM thread writes a line through gpiolib and both CPUs
    schedule. Each switch patches live kernel code. If the guest wedges here, the stall
    watch stops it and its verdict says where each vCPU was; if it lives through TOGGLES
    switches, this passes and says so (the hazard did not show this time)."""
    import lgpio
    from lines import TRACE_EVENT, TRACING

    chip = lgpio.gpiochip_open(0)
    line = 40
    lgpio.gpio_claim_output(chip, line)
    lgpio.tx_pwm(chip, line, 1000, 50)  # lgpio's PWM thread: gpiolib writes, 2 kHz
    enable = TRACING / TRACE_EVENT / "enable"
    try:
        for i in range(TOGGLES):
            enable.write_text("0")
            enable.write_text("1")
            if i % 100 == 0:
                print(f"patch probe: {i} switches", flush=True)
    finally:
        lgpio.tx_pwm(chip, line, 0, 0)
        lgpio.gpio_free(chip, line)
        lgpio.gpiochip_close(chip)
        enable.write_text("1")  # as .ci/kernel/guest left it
    print(f"patch probe: {TOGGLES} switches, and the guest lives", flush=True)
