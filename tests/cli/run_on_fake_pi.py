"""``launcher run`` as on a Raspberry Pi 5, up to READY, then the modules it had loaded.

    python tests/cli/run_on_fake_pi.py MODULES_OUT CONFIG   (NOTIFY_SOCKET must be set)

Not a test module: tests/cli/test_startup_imports.py runs it in a fresh process. The real
``launcher run`` code path runs (``cmd_run``'s Pi branch, the lgpio pin factory, the runner);
only what this machine lacks is stood in: the board model (``hal.pins.pi_model``), the
``lgpio`` library (tests/hal/fakes/fake_lgpio.py) and the board revision gpiozero reads from
/proc. At READY (sd_notify, on our socket) it writes ``sorted(sys.modules)`` and sends
itself SIGTERM, which stops the firmware as systemd would.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import sys
import threading
from pathlib import Path

PI5_MODEL = "Raspberry Pi 5 Model B Rev 1.0"
PI5_REVISION = 0xD04170
FAKE_LGPIO = Path(__file__).resolve().parents[1] / "hal" / "fakes" / "fake_lgpio.py"


def main() -> int:
    out, cfg = sys.argv[1:3]
    spec = importlib.util.spec_from_file_location("lgpio", FAKE_LGPIO)
    assert spec is not None and spec.loader is not None
    lgpio = importlib.util.module_from_spec(spec)
    sys.modules["lgpio"] = lgpio
    spec.loader.exec_module(lgpio)

    import hal.pins

    hal.pins.pi_model = lambda *a, **k: PI5_MODEL  # before hal.gpio binds it

    importlib.import_module("hal.gpio")  # gpiozero first as the launcher imports it
    from gpiozero.pins import local

    local.get_pi_revision = lambda: PI5_REVISION
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(os.environ["NOTIFY_SOCKET"])

    def at_ready() -> None:
        while b"READY=1" not in sock.recv(4096).split(b"\n"):
            pass
        Path(out).write_text("\n".join(sorted(sys.modules)) + "\n")
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=at_ready, daemon=True).start()
    from launcher.cli.main import main as launcher_main

    return launcher_main(["run", "--config", cfg])


if __name__ == "__main__":
    sys.exit(main())
