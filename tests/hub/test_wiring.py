"""The hub's parts are wired in one place, `Hub.__init__` (docs/architecture.md): a part's constructor
keeps what it is given and sets up its own state, and never sets an attribute of another part (as
`tables.elsewhere = self` did), so that who calls whom can be read in the composition root alone."""

from __future__ import annotations

import ast
from pathlib import Path

import server

HUB = Path(server.__file__).parent / "hub"
COMPOSITION_ROOT = "hub.py"


def _foreign_assignments(source: str) -> list[str]:
    """`x.attr = ...` in any `__init__`, where `x` is anything but `self` itself."""
    found = []
    for cls in ast.walk(ast.parse(source)):
        if not isinstance(cls, ast.ClassDef):
            continue
        for method in cls.body:
            if not (isinstance(method, ast.FunctionDef) and method.name == "__init__"):
                continue
            for node in ast.walk(method):
                targets = (
                    node.targets
                    if isinstance(node, ast.Assign)
                    else [node.target]
                    if isinstance(node, (ast.AugAssign, ast.AnnAssign))
                    else []
                )
                for target in targets:
                    for part in ast.walk(target):
                        if isinstance(part, ast.Attribute) and not (
                            isinstance(part.value, ast.Name) and part.value.id == "self"
                        ):
                            found.append(f"{cls.name}.__init__ line {part.lineno}: {ast.unparse(part)}")
    return found


def test_the_check_finds_a_constructor_setting_another_part() -> None:
    source = (
        "class Mirrors:\n    def __init__(self, tables):\n        self.tables = tables\n"
        "        tables.elsewhere = self\n"
    )
    assert _foreign_assignments(source) == ["Mirrors.__init__ line 4: tables.elsewhere"]
    assert _foreign_assignments("class A:\n    def __init__(self, b):\n        self.b, self.c = b, 0\n") == []


def test_no_part_s_constructor_sets_another_part_s_attribute() -> None:
    found = [
        f"{path.name}: {assignment}"
        for path in sorted(HUB.glob("*.py"))
        if path.name != COMPOSITION_ROOT
        for assignment in _foreign_assignments(path.read_text())
    ]
    assert not found, "wire parts together in Hub.__init__:\n" + "\n".join(found)
