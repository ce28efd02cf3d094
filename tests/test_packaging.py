"""The wheel's package list is written by hand (pyproject.toml); it must name every package."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_every_package_of_the_server_and_the_migrations_is_listed() -> None:
    settings = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(settings["packages"])
    found = {
        ".".join(path.parent.relative_to(REPO_ROOT).parts)
        for path in (REPO_ROOT / "server").rglob("__init__.py")
        if "__pycache__" not in path.parts
    }
    found |= {"kropki_migrations", "kropki_migrations.versions"}

    assert listed == found
    assert settings["package-dir"] == {"kropki_migrations": "migrations"}
    assert (REPO_ROOT / "migrations" / "versions" / "__init__.py").exists()
