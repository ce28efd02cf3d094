"""The hub's shape (docs/architecture.md): no import cycles, modules of a readable size, and every
event published through the bus."""

from __future__ import annotations

import ast
from pathlib import Path

import server

ROOT = Path(server.__file__).parent
HUB = ROOT / "hub"
MOST_LINES = 500
REASON = "Over 500 lines because"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, known: set[str]) -> set[str]:
    """The server modules a module imports, at run time or for type checking alike: a cycle through
    `if TYPE_CHECKING:` is still two modules that cannot be understood one without the other."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found |= {name for name in names if name in known}
    return found


def _graph() -> dict[str, set[str]]:
    paths = {_module_name(path): path for path in ROOT.rglob("*.py")}
    known = set(paths)
    return {name: _imports(path, known) - {name} for name, path in paths.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules along it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for other in sorted(graph[name]):
            if state.get(other) == 1:
                return path[path.index(other) :] + [other]
            if other not in state and (found := visit(other)) is not None:
                return found
        path.pop()
        state[name] = 2
        return None

    for name in sorted(graph):
        if name not in state and (found := visit(name)) is not None:
            return found
    return None


def test_the_check_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_server_module_imports_itself_through_others() -> None:
    graph = _graph()
    assert "server.hub.hub" in graph and graph["server.hub.computer"], "the graph is read"
    assert _cycle(graph) is None


def test_no_hub_module_is_over_500_lines_without_a_reason_at_its_top() -> None:
    for path in HUB.glob("*.py"):
        text = path.read_text()
        if text.count("\n") > MOST_LINES:
            docstring = ast.get_docstring(ast.parse(text)) or ""
            assert REASON in docstring, f"{path.name}: {text.count(chr(10))} lines, no reason at its top"


def test_events_are_numbered_and_delivered_only_by_the_bus() -> None:
    """Everything a session sees goes through server/hub/bus.py: nothing else posts to an event log,
    wakes a long poll or makes an event counter, so a bus between processes can take its place."""
    for path in HUB.glob("*.py"):
        if path.name in ("bus.py", "mailbox.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                called = ast.unparse(node.func)
                assert not called.endswith((".post", ".set_result")) and called != "Counter", (
                    f"{path.name}:{node.lineno}: {called}"
                )
