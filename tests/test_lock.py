"""pyproject.toml and the lock files in requirements/ agree (docs/operations.md, "Installing: the locked
dependencies").

What agreeing means, as decided here:

- every requirement pyproject.toml makes of a lock (its dependencies and the extras the lock is made
  for; pyproject's build-system for requirements/build.txt) is satisfied by each version the lock pins
  for that package, and every extra is covered by some lock, so that a new one cannot go unlocked;
- nothing is pinned that pyproject.toml no longer asks for, and nothing it needs is left out: the pins
  that apply on this machine are exactly what pyproject.toml asks for and what that needs in turn,
  followed through the installed packages' own metadata (uv's `# via` comments are not read: they are
  the tool's, not a contract). That needs `.venv` installed from the locks, which `make` does before
  any test, and a package installed at another version than its pin fails too: `.venv` then is not
  what the lock says. Pins for other platforms (uvloop is not for Windows, colorama only for it) are
  checked against pyproject's specifiers only;
- a package pinned in two lock files has the same versions in both;
- every pin is exact (`==`) and carries sha256 hashes, since `pip install --require-hashes` wants them.
"""

from __future__ import annotations

import copy
import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Covers:
    """What pyproject.toml asks of one lock file."""

    extras: tuple[str, ...] = ()
    build: bool = False  # pyproject's build-system.requires instead of the project's dependencies


LOCKS = {
    "requirements/build.txt": Covers(build=True),  # make, the image's build stage, the systemd steps
    "requirements/server.txt": Covers(extras=("postgresql", "fast", "cluster")),  # the image, systemd
    "requirements/dev.txt": Covers(extras=("test", "fast", "postgresql", "cluster", "lock")),  # make
}


@dataclass(frozen=True)
class Pin:
    name: str  # canonical
    version: Version
    marker: Marker | None
    hashes: tuple[str, ...]


def read_lock(text: str) -> list[Pin]:
    """The pins of a requirements file as uv writes it: `name==version ; marker` and `--hash=` options on
    continuation lines; comments and blank lines skipped. Anything else is refused, so that a line this
    reader does not know cannot pass unchecked."""
    pins = []
    for line in re.sub(r"\\\n", " ", text).splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        requirement, *hashes = re.split(r"\s+--hash=", line)
        parsed = Requirement(requirement)
        specifiers = list(parsed.specifier)
        if len(specifiers) != 1 or specifiers[0].operator != "==" or "*" in specifiers[0].version:
            raise ValueError(f"not an exact pin: {requirement}")
        version = Version(specifiers[0].version)
        pins.append(Pin(canonicalize_name(parsed.name), version, parsed.marker, tuple(hashes)))
    return pins


def asked_by(pyproject: dict, covers: Covers) -> list[Requirement]:
    if covers.build:
        return [Requirement(text) for text in pyproject["build-system"]["requires"]]
    project = pyproject["project"]
    texts = list(project["dependencies"])
    for extra in covers.extras:
        texts += project["optional-dependencies"][extra]
    return [Requirement(text) for text in texts]


def applies_here(marker: Marker | None, extras: Iterable[str] = ()) -> bool:
    return marker is None or any(marker.evaluate({"extra": extra}) for extra in ("", *extras))


def needed_here(
    asked: Iterable[Requirement], installed: Callable[[str], metadata.Distribution]
) -> dict[str, metadata.Distribution]:
    """Every package `asked` needs on this machine, through the installed packages' requirements (extras
    and markers followed as pip follows them)."""
    needed: dict[str, metadata.Distribution] = {}
    seen: set[tuple[str, str]] = set()
    todo = [requirement for requirement in asked if applies_here(requirement.marker)]
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        wanted = {(name, extra) for extra in ("", *requirement.extras)} - seen
        if not wanted:
            continue
        seen |= wanted
        distribution = needed.get(name) or installed(name)
        needed[name] = distribution
        for text in distribution.requires or ():
            dependency = Requirement(text)
            if applies_here(dependency.marker, (extra for _, extra in wanted if extra)):
                todo.append(dependency)
    return needed


def problems(
    pyproject: dict, locks: dict[str, str], installed: Callable[[str], metadata.Distribution]
) -> list[str]:
    """Every way pyproject.toml and the lock files (their texts, by path) disagree, one line each."""
    found = []
    pins = {}
    for path, text in locks.items():
        try:
            pins[path] = read_lock(text)
        except ValueError as error:
            found.append(f"{path}: {error}")
            pins[path] = []
    covered = {extra for covers in LOCKS.values() for extra in covers.extras}
    for extra in sorted(pyproject["project"]["optional-dependencies"].keys() - covered):
        found.append(f"pyproject.toml's extra {extra!r} is in no lock file (tests/test_lock.py, LOCKS)")
    for path, covers in LOCKS.items():
        asked = asked_by(pyproject, covers)
        found += [f"{path} {problem}" for problem in pin_problems(asked, pins[path])]
        found += [f"{path} {problem}" for problem in closure_problems(asked, pins[path], installed)]
    return found + across_locks(pins)


def pin_problems(asked: list[Requirement], pins: list[Pin]) -> list[str]:
    """What pyproject.toml asks that the pins do not satisfy, and pins without hashes."""
    found = []
    by_name: dict[str, list[Pin]] = {}
    for pin in pins:
        by_name.setdefault(pin.name, []).append(pin)
        if not pin.hashes or not all(value.startswith("sha256:") for value in pin.hashes):
            found.append(f"pins {pin.name}=={pin.version} without sha256 hashes")
    for requirement in asked:
        name = canonicalize_name(requirement.name)
        if name not in by_name:
            found.append(f"does not pin {requirement}, which pyproject.toml asks for: run make lock")
        for pin in by_name.get(name, ()):
            if not requirement.specifier.contains(pin.version, prereleases=True):
                found.append(f"pins {name}=={pin.version}, outside pyproject.toml's {requirement}")
    return found


def closure_problems(
    asked: list[Requirement], pins: list[Pin], installed: Callable[[str], metadata.Distribution]
) -> list[str]:
    """Pins that nothing asked for needs on this machine, needs that are not pinned, and what `.venv`
    holds at another version."""
    here = {pin.name: pin.version for pin in pins if applies_here(pin.marker)}
    try:
        needed = {name: Version(dist.version) for name, dist in needed_here(asked, installed).items()}
    except metadata.PackageNotFoundError as error:
        return [f"cannot be checked: {error.name} is not installed (run make install)"]
    found = [
        f"pins {name}, which nothing in pyproject.toml asks for: run make lock"
        for name in sorted(here.keys() - needed.keys())
    ]
    found += [
        f"does not pin {name}, which pyproject.toml's requirements need: run make lock"
        for name in sorted(needed.keys() - here.keys())
    ]
    found += [
        f"pins {name}=={here[name]}, and {needed[name]} is installed: run make install"
        for name in sorted(here.keys() & needed.keys())
        if here[name] != needed[name]
    ]
    return found


def across_locks(pins: dict[str, list[Pin]]) -> list[str]:
    """A package pinned in two lock files must be pinned alike: they are installed together."""
    versions: dict[str, dict[str, set[Version]]] = {}
    for path, pinned in pins.items():
        for pin in pinned:
            versions.setdefault(pin.name, {}).setdefault(path, set()).add(pin.version)
    found = []
    for name, by_path in sorted(versions.items()):
        if len({frozenset(pinned) for pinned in by_path.values()}) > 1:
            listed = "; ".join(f"{path} {', '.join(map(str, sorted(v)))}" for path, v in by_path.items())
            found.append(f"{name} is pinned differently in two lock files ({listed}): run make lock")
    return found


def the_pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def the_locks() -> dict[str, str]:
    return {path: (REPO / path).read_text() for path in LOCKS}


def test_pyproject_and_the_lock_files_agree() -> None:
    found = problems(the_pyproject(), the_locks(), metadata.distribution)

    assert not found, "pyproject.toml and the lock files disagree:\n" + "\n".join(found)


def test_a_requirement_no_pin_satisfies_is_named() -> None:
    pyproject = the_pyproject()
    dependencies = pyproject["project"]["dependencies"]
    (aiohttp,) = (index for index, text in enumerate(dependencies) if text.startswith("aiohttp"))
    dependencies[aiohttp] = "aiohttp>=4,<5"

    found = problems(pyproject, the_locks(), metadata.distribution)

    assert len(found) == len(LOCKS) - 1  # server.txt and dev.txt; build.txt has nothing of the project's
    assert all(
        "pins aiohttp==" in line and "outside pyproject.toml's aiohttp<5,>=4" in line for line in found
    ), found


def test_a_pin_nothing_asks_for_any_more_is_named() -> None:
    pyproject = the_pyproject()
    pyproject["project"]["dependencies"] = [
        text for text in pyproject["project"]["dependencies"] if not text.startswith("networkx")
    ]

    found = problems(pyproject, the_locks(), metadata.distribution)

    assert found == [
        f"{path} pins networkx, which nothing in pyproject.toml asks for: run make lock"
        for path in ("requirements/server.txt", "requirements/dev.txt")
    ]


def test_a_new_requirement_or_extra_not_locked_is_named() -> None:
    pyproject = copy.deepcopy(the_pyproject())
    pyproject["project"]["optional-dependencies"]["cluster"].append("hiredis>=3")
    pyproject["project"]["optional-dependencies"]["docs"] = ["sphinx>=8"]

    found = problems(pyproject, the_locks(), metadata.distribution)

    assert "pyproject.toml's extra 'docs' is in no lock file (tests/test_lock.py, LOCKS)" in found
    for path in ("requirements/server.txt", "requirements/dev.txt"):
        assert f"{path} does not pin hiredis>=3, which pyproject.toml asks for: run make lock" in found


def test_locks_that_differ_from_each_other_or_from_the_venv_are_named() -> None:
    locks = the_locks()
    (greenlet,) = (pin for pin in read_lock(locks["requirements/server.txt"]) if pin.name == "greenlet")
    other = f"{greenlet.version.major + 1}.0.0"
    server = locks["requirements/server.txt"]
    locks["requirements/server.txt"] = server.replace(f"greenlet=={greenlet.version}", f"greenlet=={other}")

    found = problems(the_pyproject(), locks, metadata.distribution)

    installed = f"and {greenlet.version} is installed: run make install"
    assert f"requirements/server.txt pins greenlet=={other}, {installed}" in found
    assert any(line.startswith("greenlet is pinned differently in two lock files") for line in found), found


def test_a_pin_without_hashes_or_a_loose_requirement_is_refused() -> None:
    locks = the_locks()
    locks["requirements/build.txt"] = "setuptools==80.0.0\nwheel>=0.40\n"

    found = problems(the_pyproject(), locks, metadata.distribution)

    assert found[0] == "requirements/build.txt: not an exact pin: wheel>=0.40"
    assert read_lock("setuptools==80.0.0\n") == [Pin("setuptools", Version("80.0.0"), None, ())]
    assert "requirements/build.txt pins setuptools==80.0.0 without sha256 hashes" in problems(
        the_pyproject(), locks | {"requirements/build.txt": "setuptools==80.0.0\n"}, metadata.distribution
    )
