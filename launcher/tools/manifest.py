"""The code's manifest: a SHA-256 of every file the firmware runs from, written when it is
installed and checked by ``launcher doctor``, so that a module the SD card truncated or
altered, or a stale copy of one, is named rather than run unnoticed.

    python -m launcher.tools.manifest write DIR    # DIR/MANIFEST.sha256
    python -m launcher.tools.manifest check DIR    # exit 1, a line per file that differs

It covers launcher/ and hal/ under DIR: every ``*.py``, the bytecode the service actually
runs (``__pycache__/*.pyc``, written by ``compileall`` just before, in systemd/install.sh),
and the shipped defaults (``*.toml``). Its lines are ``sha256sum``'s, so ``sha256sum -c
MANIFEST.sha256`` in DIR checks it too. The service does not check it at start: why is in
docs/RELIABILITY.md ("Corrupted state, config and code").
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

NAME = "MANIFEST.sha256"
PACKAGES = ("launcher", "hal")
PATTERNS = ("*.py", "*.pyc", "*.toml")


def covered(root: Path) -> list[str]:
    """The files under ``root`` the manifest covers, as relative POSIX paths, sorted."""
    found = {p.relative_to(root).as_posix() for package in PACKAGES
             for pattern in PATTERNS for p in (root / package).rglob(pattern) if p.is_file()}
    return sorted(found)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def text(root: Path) -> str:
    """The manifest of the files under ``root`` as they are now."""
    return "".join(f"{digest(root / rel)}  {rel}\n" for rel in covered(root))


def parse(manifest: str) -> dict[str, str]:
    """A manifest's lines as {path: sha256}; ValueError naming a line that is not one."""
    out: dict[str, str] = {}
    for n, line in enumerate(manifest.splitlines(), 1):
        sha, sep, rel = line.partition("  ")
        if not sep or len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha) \
                or not rel:
            raise ValueError(f"line {n} is not a sha256sum line: {line[:80]!r}")
        out[rel] = sha
    return out


def verify(root: Path) -> list[str]:
    """What differs from the manifest under ``root``: a line per file (empty: all match)."""
    try:
        listed = parse((root / NAME).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return [f"{NAME} unreadable ({exc})"]
    except ValueError as exc:
        return [f"{NAME}: {exc}"]
    problems = []
    for rel, sha in listed.items():
        try:
            now = digest(root / rel)
        except OSError:
            problems.append(f"{rel}: missing")
            continue
        if now != sha:
            problems.append(f"{rel}: altered (its SHA-256 is not the one installed)")
    problems += [f"{rel}: not in the manifest (added since the install)"
                 for rel in covered(root) if rel not in listed]
    return problems


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m launcher.tools.manifest",
                                description=__doc__.splitlines()[0])
    p.add_argument("action", choices=("write", "check"))
    p.add_argument("root", type=Path, help="the folder holding launcher/ and hal/")
    args = p.parse_args(argv)
    if args.action == "write":
        from launcher.firmware.disk import atomic_write

        atomic_write(args.root / NAME, text(args.root), keep_mode=True, new_mode=0o644)
        return 0
    problems = verify(args.root)
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
