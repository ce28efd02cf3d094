"""Every refusal code the server can send, read from the server's own code (the syntax trees of every
module under server/), so that a code added tomorrow is found without anyone touching a list.

A code leaves the server in three ways:
- `ProtocolError(code, ...)`: answered `err.<code>` by /a.kropki, `nieOk.<code>` by /auth.py, or, for
  a command inside a poll, an `e` line written in the player's language (server/hub/sentences.py);
- an answer spelled out as a string: `"err.tooFast"`, auth.py's `INTERNAL + "tooManyRegistrations"`,
  the bare `nieOk.` of an internal error;
- a line for one player alone: `for_player(lang, code, ...)`, through `Tables.tell`.

A code is read wherever it is written: a literal, an f-string's text before its first `.`
(`f"missing.{name}"` is `missing`), a module's constant, a local variable, or a parameter, whose
values are the arguments of every call of its function (`within_a_minute(..., "chatFlood", ...)`).
An `X.code` passes on a code found where it was raised (a refusal of another member of a cluster, which
runs this code, arrives as `ProtocolError.relayed(...)`). Anything else is unreadable, and the tests
fail on it: a code must be written where it can be read.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path

import server

SOURCES = Path(server.__file__).parent
PREFIXES = ("err.", "nieOk.")
# The layers a poll's commands pass through: a code raised there may become an `e` line.
STREAM_LAYERS = ("hub", "protocol", "engine", "cluster")
UNKNOWN = "\x01"  # a part of a string that cannot be read
FORWARDED = "\x02"  # a code passed on (`refused.code`)
LOOSE = 1 << 30  # deeper than any reading: no loop met


@dataclass(frozen=True)
class Place:
    module: str  # server/hub/limits.py
    line: int

    def __str__(self) -> str:
        return f"{self.module}:{self.line}"


Found = dict[str, set[Place]]


@dataclass
class Codes:
    """What the server can send, each code with the places that send it."""

    raised: Found = field(default_factory=lambda: defaultdict(set))  # ProtocolError
    answers: Found = field(default_factory=lambda: defaultdict(set))  # "err.x", "nieOk.x"
    told: Found = field(default_factory=lambda: defaultdict(set))  # for_player's codes
    unreadable: list[str] = field(default_factory=list)

    @property
    def refusals(self) -> set[str]:
        """The codes a client reads as `err.<code>` / `nieOk.<code>` (the bare `nieOk.` is "")."""
        return set(self.raised) | set(self.answers)

    @property
    def in_the_stream(self) -> set[str]:
        """The codes an `e` line may carry: raised in the layers a poll's commands reach, or told."""
        raised_there = {
            code
            for code, places in self.raised.items()
            if any(place.module.split("/")[1] in STREAM_LAYERS for place in places)
        }
        return raised_there | set(self.told)


@dataclass
class _Module:
    path: str
    tree: ast.Module
    parents: dict[ast.AST, ast.AST]
    constants: dict[str, list[ast.expr]]  # module-level names -> their values
    imported: dict[str, tuple[str, str]]  # name -> (module, name there)


class Reader:
    def __init__(self, root: Path = SOURCES) -> None:
        self.modules: dict[str, _Module] = {}
        self.assignments: dict[ast.AST, dict[str, list[ast.expr]]] = {}  # _assigned's
        self.reading: dict[ast.AST, int] = {}  # the nodes `values` is reading, each with its depth
        self.looped_to = LOOSE  # the least depth a loop of the node read now went back to
        self.known: dict[ast.AST, frozenset[str]] = {}  # answers read whole (see `values`)
        for path in sorted(root.rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            dotted = ".".join(("server", *path.relative_to(root).with_suffix("").parts))
            self.modules[dotted.removesuffix(".__init__")] = _module(
                path.relative_to(root.parent).as_posix(), tree
            )

    @cached_property
    def calls(self) -> dict[str, list[tuple[_Module, ast.Call]]]:
        """Calls by the name called (`f(...)` and `x.f(...)` alike)."""
        found = defaultdict(list)
        for module in self.modules.values():
            for node in ast.walk(module.tree):
                if isinstance(node, ast.Call) and (name := _called(node)) is not None:
                    found[name].append((module, node))
        return found

    def codes(self) -> Codes:
        codes = Codes()
        for module in self.modules.values():
            for node in ast.walk(module.tree):
                if isinstance(node, ast.Call) and _called(node) == "ProtocolError":
                    self._note(codes.raised, codes, module, node, _argument(node, 0, "code"))
                elif isinstance(node, ast.Call) and _called(node) == "for_player":
                    self._note(codes.told, codes, module, node, _argument(node, 1, "code"))
                elif _an_answer(node, module):
                    for text in self.values(node, module):
                        prefix = next((p for p in PREFIXES if text.startswith(p)), None)
                        if prefix is not None:
                            self._read(codes.answers, codes, module, node, text[len(prefix) :])
        return codes

    def _note(self, into: Found, codes: Codes, module: _Module, call: ast.Call, code: ast.AST | None) -> None:
        if code is None:
            codes.unreadable.append(f"{Place(module.path, call.lineno)}: no code given")
            return
        for text in self.values(code, module):
            self._read(into, codes, module, call, text)

    def _read(self, into: Found, codes: Codes, module: _Module, node: ast.AST, text: str) -> None:
        code = text.split(".", 1)[0]
        place = Place(module.path, getattr(node, "lineno", 0))
        if code == FORWARDED:
            return  # found where it was raised
        if UNKNOWN in code or FORWARDED in code:
            codes.unreadable.append(f"{place}: {ast.unparse(node)[:100]}")
            return
        into[code].add(place)

    # --- what an expression can be -------------------------------------------------------------

    def values(self, node: ast.AST, module: _Module) -> frozenset[str]:
        """The strings `node` can be, with UNKNOWN for a part that cannot be read (a loop: a node met
        again while it is being read) and FORWARDED for a code passed on.

        An answer is kept when no loop met in its reading went back above the node (the low link of
        Tarjan's strongly connected components): it is then the same wherever the node is reached from.
        Read again along every path of calls instead, the server's code took 100-120 s of CPU a run
        (2.8 s now, the same codes at the same places found)."""
        known = self.known.get(node)
        if known is not None:
            return known
        depth = self.reading.get(node)
        if depth is not None:
            self.looped_to = min(self.looped_to, depth)
            return frozenset({UNKNOWN})
        depth = self.reading[node] = len(self.reading)
        outer, self.looped_to = self.looped_to, LOOSE
        try:
            found = frozenset(self._read_values(node, module))
        finally:
            del self.reading[node]
        if self.looped_to >= depth:
            self.known[node] = found
        self.looped_to = min(outer, self.looped_to)
        return found

    def _read_values(self, node: ast.AST, module: _Module) -> set[str] | frozenset[str]:
        if isinstance(node, ast.Constant):
            return {node.value} if isinstance(node.value, str) else {UNKNOWN}
        if isinstance(node, ast.JoinedStr):
            texts = {""}
            for part in node.values:
                texts = {head + tail for head in texts for tail in self.values(part, module)}
            return texts
        if isinstance(node, ast.FormattedValue):
            return self.values(node.value, module)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            heads, tails = self.values(node.left, module), self.values(node.right, module)
            return {head + tail for head in heads for tail in tails}
        if isinstance(node, ast.IfExp):
            return self.values(node.body, module) | self.values(node.orelse, module)
        if isinstance(node, ast.Attribute) and node.attr == "code":
            return {FORWARDED}
        if isinstance(node, ast.Name):
            return self._name(node, module)
        return {UNKNOWN}

    def _name(self, node: ast.Name, module: _Module) -> set[str]:
        function = _enclosing_function(node, module)
        if function is not None:
            assigned = self._assigned(function).get(node.id, [])
            parameter = _parameter(function, node.id)
            if assigned or parameter is not None:
                found = set().union(*(self.values(value, module) for value in assigned))
                if parameter is not None:
                    found |= self._arguments(function, module, parameter)
                return found
        if node.id in module.constants:
            return set().union(*(self.values(value, module) for value in module.constants[node.id]))
        if node.id in module.imported:
            source, name = module.imported[node.id]
            other = self.modules.get(source)
            if other is not None and name in other.constants:
                return set().union(*(self.values(value, other) for value in other.constants[name]))
        return {UNKNOWN}

    def _assigned(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, list[ast.expr]]:
        """The function's assignments by name, walked once: a name is looked up over and over (30 s of
        the suite's CPU before)."""
        found = self.assignments.get(function)
        if found is None:
            found = self.assignments[function] = defaultdict(list)
            for target, value in _assignments(function):
                found[target].append(value)
        return found

    def _arguments(
        self,
        function: ast.FunctionDef | ast.AsyncFunctionDef,
        module: _Module,
        parameter: tuple[int, str, ast.expr | None],
    ) -> set[str]:
        """What every call of `function` passes as `parameter` (its default where a call omits it)."""
        position, name, default = parameter
        method = _is_method(function, module)
        found: set[str] = set()
        calls = self.calls.get(function.name, [])
        if not calls:
            return {UNKNOWN}
        for caller, call in calls:
            shifted = method and isinstance(call.func, ast.Attribute)  # `x.f(a)`: `a` is the second
            argument = _argument(call, position - 1 if shifted else position, name)
            if argument is None:
                if _spread(call):
                    found.add(UNKNOWN)
                elif default is not None:
                    found |= self.values(default, module)
                continue
            found |= self.values(argument, caller)
        return found


# --- syntax helpers ---------------------------------------------------------------------------


def _module(path: str, tree: ast.Module) -> _Module:
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    constants: dict[str, list[ast.expr]] = defaultdict(list)
    imported = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    constants[target.id].append(statement.value)
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            if statement.value is not None:
                constants[statement.target.id].append(statement.value)
        elif isinstance(statement, ast.ImportFrom) and statement.module:
            for alias in statement.names:
                imported[alias.asname or alias.name] = (statement.module, alias.name)
    return _Module(path, tree, parents, constants, imported)


def _called(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _argument(call: ast.Call, position: int, name: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    if len(positional) == len(call.args) and 0 <= position < len(positional):
        return positional[position]
    return None


def _spread(call: ast.Call) -> bool:
    """`f(*args)` or `f(**options)`: which argument is which cannot be read."""
    return any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)


def _an_answer(node: ast.AST, module: _Module) -> bool:
    """A whole string expression (not a part of a bigger one, not a docstring) that may spell an answer."""
    if not (
        isinstance(node, ast.JoinedStr | ast.BinOp)
        or (isinstance(node, ast.Constant) and isinstance(node.value, str))
    ):
        return False
    parent = module.parents.get(node)
    if isinstance(parent, ast.JoinedStr | ast.FormattedValue | ast.BinOp) or isinstance(parent, ast.Expr):
        return False  # a part of a bigger string, or a docstring
    return True


def _enclosing_function(node: ast.AST, module: _Module) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    while (node := module.parents.get(node)) is not None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return node
    return None


def _is_method(function: ast.AST, module: _Module) -> bool:
    return isinstance(module.parents.get(function), ast.ClassDef) and not any(
        isinstance(d, ast.Name) and d.id == "staticmethod" for d in getattr(function, "decorator_list", [])
    )


def _parameter(
    function: ast.FunctionDef | ast.AsyncFunctionDef, name: str
) -> tuple[int, str, ast.expr | None] | None:
    """(position, name, default) of the function's parameter `name` (position -1: keyword-only)."""
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    for position, (argument, default) in enumerate(zip(positional, defaults, strict=True)):
        if argument.arg == name:
            return position, name, default
    for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        if argument.arg == name:
            return -1, name, default
    return None


def _assignments(function: ast.AST) -> Iterator[tuple[str, ast.expr]]:
    """(name, value) of the function's own assignments (not those of functions inside it); a loop's
    or a `with`'s target cannot be read."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in _names(target):
                    yield name, node.value if isinstance(target, ast.Name) else ast.Constant(UNKNOWN)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            yield node.target.id, node.value or ast.Constant(UNKNOWN)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            yield node.target.id, ast.Constant(UNKNOWN)
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension | ast.withitem | ast.NamedExpr):
            target = getattr(node, "target", None) or getattr(node, "optional_vars", None)
            for name in _names(target):
                yield name, ast.Constant(UNKNOWN)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            yield node.name, ast.Constant(UNKNOWN)
        stack.extend(ast.iter_child_nodes(node))


def _names(target: ast.AST | None) -> Iterator[str]:
    if target is None:
        return
    for node in ast.walk(target):
        if isinstance(node, ast.Name):
            yield node.id


@cache
def server_codes() -> Codes:
    """The codes of this server's code, read once per test run."""
    return Reader().codes()
