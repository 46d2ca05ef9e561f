"""One version everywhere: the package, `launcher --version`, the installed metadata, the
changelog's newest release."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest

from launcher import __version__
from launcher.cli.main import main

REPO = Path(__file__).resolve().parents[2]


def test_launcher_version_is_the_package_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"launcher {__version__}\n"


def test_the_installed_metadata_takes_its_version_from_the_package():
    pyproject = (REPO / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert 'version = { attr = "launcher.__version__" }' in pyproject
    assert metadata.version("uno-launcher") == __version__


def test_the_changelog_names_the_current_version_as_its_newest_release():
    text = (REPO / "CHANGELOG.md").read_text()
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", text, flags=re.M)
    assert released and released[0] == __version__


def test_the_licence_file_is_the_mit_licence_pyproject_names():
    assert 'license = "MIT"' in (REPO / "pyproject.toml").read_text()
    assert (REPO / "LICENSE").read_text().startswith("MIT License")
