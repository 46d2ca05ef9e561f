"""The code's manifest (launcher/tools/manifest.py): written at install, it names each file of
the installed copy that was truncated, altered, removed or added since; every fault of every
file is the storage campaign's (tests/reliability/test_storage_campaign.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from launcher.tools import manifest


def installed(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    for rel, text in {"launcher/__init__.py": "x = 1\n", "launcher/a.py": "y = 2\nz = 3\n",
                      "launcher/__pycache__/a.cpython-311.pyc": "bytecode",
                      "launcher/default.toml": "[a]\n", "hal/__init__.py": "",
                      "README.md": "not code\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    assert manifest.main(["write", str(root)]) == 0
    return root


def test_a_fresh_install_matches_and_sha256sum_reads_the_same_file(tmp_path: Path) -> None:
    root = installed(tmp_path)
    assert manifest.verify(root) == []
    assert [line.split("  ")[1] for line in (root / manifest.NAME).read_text().splitlines()] == [
        "hal/__init__.py", "launcher/__init__.py", "launcher/__pycache__/a.cpython-311.pyc",
        "launcher/a.py", "launcher/default.toml"]  # code only: README.md is not
    done = subprocess.run(["sha256sum", "-c", "--quiet", manifest.NAME], cwd=root,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_each_change_is_named(tmp_path: Path) -> None:
    root = installed(tmp_path)
    (root / "launcher/a.py").write_text("y = 2\n")  # cut at a line: still valid Python
    (root / "launcher/__pycache__/a.cpython-311.pyc").write_text("bytecodf")
    (root / "hal/__init__.py").unlink()
    (root / "hal/extra.py").write_text("")
    assert manifest.verify(root) == [
        "hal/__init__.py: missing",
        "launcher/__pycache__/a.cpython-311.pyc: altered (its SHA-256 is not the one installed)",
        "launcher/a.py: altered (its SHA-256 is not the one installed)",
        "hal/extra.py: not in the manifest (added since the install)"]
    done = subprocess.run([sys.executable, "-m", "launcher.tools.manifest", "check", str(root)],
                          capture_output=True, text=True)
    assert done.returncode == 1 and len(done.stdout.splitlines()) == 4


def test_a_manifest_that_is_not_one_is_said(tmp_path: Path) -> None:
    root = installed(tmp_path)
    (root / manifest.NAME).write_text("not a line\n")
    assert manifest.verify(root) == [f"{manifest.NAME}: line 1 is not a sha256sum line: "
                                     "'not a line'"]
    (root / manifest.NAME).unlink()
    assert manifest.verify(root)[0].startswith(f"{manifest.NAME} unreadable")
