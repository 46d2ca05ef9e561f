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

PROBE = os.environ.get("KERNEL_STALL_PROBE") == "1"


@pytest.mark.skipif(not PROBE, reason="the stall probe runs only on request: "
                    "bash .ci/kernel/stall-probe")
def test_a_stopped_pytest_is_diagnosed_from_outside() -> None:
    print("stall probe: pytest stops itself now", flush=True)
    os.kill(os.getpid(), signal.SIGSTOP)
    pytest.fail("the stall probe's pytest ran again: nothing should have continued it")
