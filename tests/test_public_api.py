"""The server stands on aiohttp as aiohttp is published: its public, documented API and nothing else.

A private name works until the next aiohttp release renames it, a security fix included; copied code
goes on running against internals that moved. So this scans every module of server/ (its syntax tree,
not a run) and fails on:

1. an import from an aiohttp module other than the public ones, `aiohttp`, `aiohttp.web`, `aiohttp.abc`
   and `aiohttp.hdrs` (the header names, which `aiohttp` exports), as aiohttp's reference documents
   them (`aiohttp.web_protocol`, `aiohttp.http_parser`, `aiohttp.helpers`, `aiohttp.streams`, ... are
   aiohttp's own modules, whatever they hold);
2. a name from those modules that starts with `_`, is not in the module's `__all__`, or is in
   UNDOCUMENTED (exported, but in no page of aiohttp's reference: `web.RequestHandler`, the connection
   protocol whose insides the copied request loop drove), imported or read as `web.X`;
3. an underscore attribute (`x._name`, not dunders) of an aiohttp object. What is an aiohttp object is
   decided by name, as no type checker runs here: a module or class imported from aiohttp and what
   hangs off it (`web.AppRunner._make_server`), a variable annotated with an aiohttp type, and the
   names this code gives aiohttp's objects by convention (AIOHTTP_NAMES: `request._match_info`,
   `connection._request_in_progress`, `transport._x`). `getattr`/`setattr`/`hasattr` with such a name
   in a string count too;
4. in a class that subclasses an aiohttp class, any underscore name on `self`, `cls` or `super()`, and
   any method named with one: it would read, write or override aiohttp's private members (its own
   would share their namespace). Dunders are Python's, not aiohttp's.

The project's own underscore names on its own objects (`self._sweeper`, `other._rows`) are its business
and are not looked at.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from aiohttp import abc, hdrs, web

SERVER = Path(__file__).resolve().parents[1] / "server"
PUBLIC_MODULES = {"aiohttp": aiohttp, "aiohttp.web": web, "aiohttp.abc": abc, "aiohttp.hdrs": hdrs}
UNDOCUMENTED = frozenset({"RequestHandler"})
AIOHTTP_NAMES = frozenset(
    {
        "app",
        "connection",
        "handler",
        "match_info",
        "message",
        "payload",
        "protocol",
        "request",
        "response",
        "router",
        "runner",
        "server",
        "site",
        "transport",
        "writer",
    }
)
NAME_FUNCTIONS = frozenset({"getattr", "setattr", "hasattr", "delattr"})


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _public_in(module: str, name: str) -> bool:
    exported = getattr(PUBLIC_MODULES[module], "__all__", None)
    if name in UNDOCUMENTED or _private(name):
        return False
    return exported is None or name in exported


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


class Scan(ast.NodeVisitor):
    def __init__(self, path: str) -> None:
        self.path = path
        self.findings: list[Finding] = []
        self.aiohttp_names: dict[str, str] = {}  # local name -> the aiohttp module or class it stands for
        self.classes: list[bool] = []  # for each class being read: whether it subclasses aiohttp's

    def found(self, node: ast.AST, what: str) -> None:
        self.findings.append(Finding(self.path, getattr(node, "lineno", 0), what))

    # --- 1 and 2: imports ----------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name == "aiohttp" or alias.name.startswith("aiohttp."):
                if alias.name not in PUBLIC_MODULES:
                    self.found(node, f"import of aiohttp's own module {alias.name}")
                self.aiohttp_names[(alias.asname or alias.name).split(".")[0]] = alias.name

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or not (module == "aiohttp" or module.startswith("aiohttp.")):
            return
        for alias in node.names:
            full = f"{module}.{alias.name}"
            if full in PUBLIC_MODULES:  # from aiohttp import web
                self.aiohttp_names[alias.asname or alias.name] = full
            elif module not in PUBLIC_MODULES:
                self.found(node, f"import of {alias.name} from aiohttp's own module {module}")
            elif not _public_in(module, alias.name):
                self.found(node, f"import of {alias.name}, not public in {module}")
            self.aiohttp_names.setdefault(alias.asname or alias.name, full)

    # --- 2 and 3: attributes -------------------------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> None:
        root = _root(node)
        if isinstance(node.value, ast.Name) and self.aiohttp_names.get(node.value.id) in PUBLIC_MODULES:
            module = self.aiohttp_names[node.value.id]
            if not _public_in(module, node.attr):
                self.found(node, f"{node.value.id}.{node.attr}, not public in {module}")
        elif _private(node.attr) and root is not None and self._is_aiohttp(root):
            self.found(node, f"underscore attribute {node.attr} of aiohttp's {root}")
        elif _private(node.attr) and self.classes and self.classes[-1] and root in ("self", "cls", "super"):
            self.found(node, f"underscore attribute {node.attr} in a subclass of aiohttp's")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if (
            isinstance(node.func, ast.Name)
            and node.func.id in NAME_FUNCTIONS
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
        ):
            root = _root(node.args[0]) if isinstance(node.args[0], (ast.Name, ast.Attribute)) else None
            if root is not None and (self._is_aiohttp(root) or (self.classes and self.classes[-1])):
                self.found(node, f"{node.func.id} of underscore attribute {node.args[1].value}")
        self.generic_visit(node)

    def _is_aiohttp(self, root: str) -> bool:
        return root in self.aiohttp_names or root in AIOHTTP_NAMES

    # --- 3 and 4: annotated variables, subclasses ----------------------------------------------

    def visit_arg(self, node: ast.arg) -> None:
        if node.annotation is not None and self._names_aiohttp(node.annotation):
            self.aiohttp_names[node.arg] = "an aiohttp object"
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if isinstance(node.target, ast.Name) and self._names_aiohttp(node.annotation):
            self.aiohttp_names[node.target.id] = "an aiohttp object"
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        subclass = any(self._names_aiohttp(base) for base in node.bases)
        self.classes.append(subclass)
        if subclass:
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _private(item.name):
                    self.found(item, f"method {item.name} in a subclass of aiohttp's")
        self.generic_visit(node)
        self.classes.pop()

    def _names_aiohttp(self, expression: ast.expr) -> bool:
        return any(
            isinstance(name, ast.Name) and name.id in self.aiohttp_names for name in ast.walk(expression)
        )


def _root(node: ast.expr) -> str | None:
    """The name an attribute chain starts from (`super` for `super().x`)."""
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id == "super":
                return "super"
            node = node.func
        else:
            node = node.value
    return node.id if isinstance(node, ast.Name) else None


def findings_in(source: str, path: str = "<source>") -> list[Finding]:
    scan = Scan(path)
    scan.visit(ast.parse(source))
    return scan.findings


def test_the_server_uses_only_aiohttp_s_public_api() -> None:
    findings = [
        finding
        for module in sorted(SERVER.rglob("*.py"))
        for finding in findings_in(module.read_text(), str(module.relative_to(SERVER.parent)))
    ]
    assert not findings, "aiohttp's private API used:\n" + "\n".join(map(str, findings))


@pytest.mark.parametrize(
    "source",
    [
        "from aiohttp.web_protocol import _ErrInfo",
        "from aiohttp.http_parser import RawRequestMessage",
        "import aiohttp.helpers",
        "from aiohttp import hdrs\nhdrs._HDRS",
        "from aiohttp.web import RequestHandler",
        "from aiohttp import web\nclass C(web.RequestHandler): pass",
        "from aiohttp import web\nweb._run_app",
        "from aiohttp import web\nclass R(web.AppRunner):\n    async def _make_server(self): ...",
        "from aiohttp import web\nclass R(web.AppRunner):\n    def f(self): return self._server",
        "from aiohttp import web\nclass R(web.AppRunner):\n    def f(self): return super()._make_server()",
        "def f(request):\n    request._match_info = None",
        "def f(request):\n    return request.protocol._request_in_progress",
        "from aiohttp import web\ndef f(x: web.StreamResponse):\n    return x._body",
        "def f(transport):\n    return getattr(transport, '_sock')",
    ],
)
def test_each_kind_of_private_use_is_found(source: str) -> None:
    assert findings_in(source)


@pytest.mark.parametrize(
    "source",
    [
        "from aiohttp import web\nclass R(web.AppRunner): pass\nweb.Application, web.AppKey('x', int)",
        "from aiohttp.abc import AbstractAccessLogger",
        "from aiohttp import hdrs\nhdrs.METH_GET",
        "from aiohttp import web\ndef f(request: web.Request):\n    return request.match_info, request.query",
        "class Mine:\n    def f(self, other):\n        return self._mine, other._rows",
        "def f(point):\n    return point._replace(x=1)",  # a named tuple's, not aiohttp's
    ],
)
def test_public_use_and_the_project_s_own_privates_pass(source: str) -> None:
    assert not findings_in(source)
