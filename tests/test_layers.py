"""The layering of ``src/elelem`` (issue #25, docs/architecture.md §1), checked on the code.

- the import graph of every module, type-checking and function-level
  imports included, has no circle, and seen as rooms (a package, or a
  module of the root) it stands on at most 12 floors;
- the package root holds at most 11 modules;
- each package imports only the packages docs/architecture.md's layer table
  says it may (the table is read from the document, so neither drifts);
- loading the transport loads no shape code, loading the log loads no
  provider, client, transport or turn code;
- the library runs with only its core dependencies installed: every
  distribution the extras bring is blocked in a fresh interpreter, which
  then imports every library module and streams a real response from a
  loopback server; the command without the ``cli`` extra says which extra
  to install;
- every error class is an ``ElelemError``, and ``errors.py``'s docstring
  draws their tree exactly.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import inspect
import json
import pkgutil
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

import elelem
from elelem.errors import ElelemError, install_line

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "elelem"
DOC = ROOT / "docs" / "architecture.md"


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the elelem modules it imports, wherever the import stands."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                graph[name].update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    head = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*head, base] if base else head)
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if full in modules:
                        graph[name].add(full)
                    elif base in modules:
                        graph[name].add(base)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_circle_finder_finds_a_planted_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles_in_src_type_checking_imports_included() -> None:
    graph = import_graph()
    assert len(graph) > 150
    assert circles(graph) == []


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "elelem"


def layer_table() -> dict[str, set[str]]:
    """docs/architecture.md §1's table: package -> the packages it may import."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## 1. Layers") : text.index("## 2.")]
    table: dict[str, set[str]] = {}
    for row in section.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`elelem"):
            continue
        allowed = set(re.findall(r"`(\w+)`", cells[2]))
        for name in re.findall(r"`elelem\.(\w+)`", cells[0]):
            table[name] = allowed
    return table


def test_each_package_imports_only_what_the_layer_table_allows() -> None:
    table = layer_table()
    graph = import_graph()
    packages = {_package(m) for m in graph} - {"elelem"}
    assert sorted(packages - table.keys()) == []
    wrong = sorted(
        f"{m} -> {w}"
        for m, targets in graph.items()
        for w in targets
        if _package(m) != "elelem"
        and _package(w) != _package(m)
        and _package(w) not in table[_package(m)]
    )
    assert wrong == []


ROOT_MODULES = 11
"""How many modules the package root may hold, ``__init__.py`` counted: the
rest stand in packages that say what they hold."""

FLOORS = 12
"""How high the house may stand: the longest chain of imports between rooms."""


def test_the_package_root_holds_few_modules() -> None:
    root = sorted(p.name for p in SRC.glob("*.py"))
    assert len(root) <= ROOT_MODULES, root


def rooms(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph seen as rooms: a package of ``elelem`` (or one module
    of its root, or the root's ``__init__``) is one room, importing the rooms
    its modules import; imports inside a room are not arrows."""
    out: dict[str, set[str]] = {_package(m): set() for m in graph}
    for module, targets in graph.items():
        out[_package(module)].update(_package(t) for t in targets)
    for room, targets in out.items():
        targets.discard(room)
    return out


def floors(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each room's floor: 1 for a room that imports none, else one above the
    highest room it imports (the graph has no circle)."""
    floor: dict[str, int] = {}

    def visit(room: str) -> int:
        if room not in floor:
            floor[room] = 1 + max((visit(t) for t in graph[room]), default=0)
        return floor[room]

    for room in sorted(graph):
        visit(room)
    return floor


def test_the_floor_counter_counts_a_planted_column() -> None:
    graph = {"a": {"b", "d"}, "b": {"c"}, "c": set(), "d": set(), "e": {"c"}}
    assert floors(graph) == {"a": 3, "b": 2, "c": 1, "d": 1, "e": 2}
    modules = {"elelem": {"elelem.x.a"}, "elelem.x.a": {"elelem.x.b"}, "elelem.x.b": set()}
    assert floors(rooms(modules)) == {"elelem": 2, "x": 1}


def test_the_import_graph_stands_on_few_floors() -> None:
    graph = rooms(import_graph())
    assert circles(graph) == []
    floor = floors(graph)
    top = max(floor.values())
    assert top <= FLOORS, sorted((f, r) for r, f in floor.items() if f > FLOORS - 3)


def floor_table() -> dict[str, int]:
    """docs/architecture.md §1's table of rooms by floor (the root's
    ``__init__.py`` is the room ``elelem``)."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## 1. Layers") : text.index("## 2.")]
    table: dict[str, int] = {}
    for row in section.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].isdigit():
            for name in re.findall(r"`([\w.]+)`", cells[1]):
                table["elelem" if name == "__init__.py" else name] = int(cells[0])
    return table


def test_the_document_draws_each_room_on_its_floor() -> None:
    assert floor_table() == floors(rooms(import_graph()))


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


def test_loading_the_transport_loads_no_shape_code() -> None:
    done = _fresh(
        "import sys, elelem.transport\n"
        "print([m for m in sys.modules if m.startswith('elelem.shapes')])"
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "[]\n", "")
    # The client loads the catalog, which knows shapes by name only: the
    # registry, no shape package until one is asked for.
    done = _fresh(
        "import sys, elelem.client\n"
        "print(sorted(m for m in sys.modules if m.startswith('elelem.shapes')))"
    )
    assert done.stdout == "['elelem.shapes', 'elelem.shapes.registry']\n", done.stderr


def test_loading_the_log_loads_no_provider_client_transport_turn_or_shape() -> None:
    done = _fresh(
        "import sys, elelem.conversation\n"
        "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('elelem.')}))"
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.replace("'", '"')) == [
        "codec",
        "conversation",
        "errors",
        "stream",
        "vocabulary",
    ]


def _closure(requirements: list[str]) -> set[str]:
    """The distributions ``requirements`` install, transitively (extras and
    markers of this interpreter honoured)."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        name = req.name.lower().replace("_", "-")
        if name in seen or (req.marker and not req.marker.evaluate({"extra": ""})):
            continue
        seen.add(name)
        try:
            dist = importlib.metadata.distribution(req.name)
        except importlib.metadata.PackageNotFoundError:
            continue
        for raw in dist.requires or ():
            sub = Requirement(raw)
            if sub.marker is None or any(
                sub.marker.evaluate({"extra": e}) for e in ("", *req.extras)
            ):
                todo.append(sub)
    return seen


def extra_only_modules() -> set[str]:
    """Top-level modules that only the extras install (not the core's closure)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = _closure(project["dependencies"])
    extras = project["optional-dependencies"]
    names = ("cli", "web", "mcp", "postgres", "otel", "google", "azure", "live", "temporal", "dbos")
    faces = [r for name in names for r in extras[name]]
    only = _closure(faces) - core
    modules = {
        module
        for module, dists in importlib.metadata.packages_distributions().items()
        if all(d.lower().replace("_", "-") in only for d in dists)
    }
    return {m for m in modules if not m.startswith("_")}


def test_the_extras_are_what_the_faces_need() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {Requirement(r).name for r in project["dependencies"]}
    assert core == {
        "httpx2",
        "h11",
        "anyio",
        "msgspec",
        "pyyaml",
        "platformdirs",
        "genai-prices",
    }
    extras = project["optional-dependencies"]
    assert extras["all"] == ["elelem[cli,web,mcp,postgres,otel,google,azure,live,temporal,dbos]"]
    assert {
        "click", "rich", "starlette", "uvicorn", "mcp", "psycopg", "opentelemetry", "websockets",
        "temporalio", "dbos",
    } <= extra_only_modules()  # fmt: skip


BLOCKER = """
import importlib.abc, sys
BLOCKED = set({blocked!r})
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked)", name=name)
        return None
sys.meta_path.insert(0, Blocker())
"""

# What needs an extra: the command and the terminal renderer (cli), the web
# view (web), tracing (otel), the test kit's ASGI server (web).
FACES = (
    "elelem.cli",
    "elelem.web",
    "elelem.telemetry",
    "elelem.testing.asgi",
    "elelem.durable.temporal",
    "elelem.durable.dbos",
)
RICH = ("elelem.render.renderer", "elelem.render.conversation")

CORE_RUN = """
import asyncio, importlib, pkgutil
import elelem
failed = []
for info in pkgutil.walk_packages(elelem.__path__, "elelem."):
    if info.name.startswith({faces!r}) or info.name in {rich!r}:
        continue
    try:
        importlib.import_module(info.name)
    except ModuleNotFoundError as exc:
        failed.append((info.name, str(exc)))
print("failed", failed)

from elelem import Client
from elelem.testing.servers import LoopbackServer, anthropic_text_body, replay

async def main():
    body = anthropic_text_body("Hello, ", "core.")
    with LoopbackServer([replay(body)]) as server:
        env = {{"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-core",
               "ELELEM_CONFIG": "/nonexistent/x.toml"}}
        async with Client(env=env) as client:
            stream = client.stream("anthropic:claude-sonnet-4-5", "Hi")
            result = await stream.final()
    print("text", result.text, result.finish.reason)

asyncio.run(main())
"""


def test_the_library_runs_with_only_the_core_installed() -> None:
    blocked = sorted(extra_only_modules())
    code = BLOCKER.format(blocked=blocked) + CORE_RUN.format(faces=FACES, rich=RICH)
    done = _fresh(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "failed []\ntext Hello, core. stop\n"


def test_the_blocker_blocks_what_a_face_needs() -> None:
    blocked = sorted(extra_only_modules())
    done = _fresh(BLOCKER.format(blocked=blocked) + "import elelem.cli")
    assert done.returncode == 1
    assert "(blocked)" in done.stderr


def test_the_command_without_the_cli_extra_names_the_extra() -> None:
    code = BLOCKER.format(blocked=["click"]) + "from elelem.command import main\nmain()"
    done = _fresh(code)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"elelem: the command needs the cli extra (click is not installed): {install_line('cli')}\n"
    )


# -- the error tree ----------------------------------------------------------------


def error_classes() -> dict[type[BaseException], str]:
    """Every exception class elelem defines, with its module."""
    found: dict[type[BaseException], str] = {}
    for info in pkgutil.walk_packages(elelem.__path__, "elelem."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
            ):
                found[value] = info.name
    return found


def draw_tree(classes: dict[type[BaseException], str]) -> str:
    """The tree errors.py's docstring draws, from the classes themselves."""

    def parent(cls: type[BaseException]) -> type[BaseException] | None:
        return next((b for b in cls.__bases__ if issubclass(b, ElelemError)), None)

    children: dict[type[BaseException] | None, list[type[BaseException]]] = {}
    for cls in classes:
        # A private class is a module's own marker: it is no part of the tree.
        if cls is not ElelemError and not cls.__name__.startswith("_"):
            children.setdefault(parent(cls), []).append(cls)
    lines: list[str] = []

    def walk(cls: type[BaseException], prefix: str, last: bool, top: bool) -> None:
        module = classes[cls].removeprefix("elelem.")
        others = [b.__name__ for b in cls.__bases__ if not issubclass(b, ElelemError)]
        label = cls.__name__ + (f" ({', '.join(others)})" if others else "")
        label += "" if module == "errors" else f"  [{module}]"
        lines.append(label if top else prefix + ("└── " if last else "├── ") + label)
        kids = sorted(children.get(cls, []), key=lambda k: k.__name__)
        for i, kid in enumerate(kids):
            inner = "" if top else prefix + ("    " if last else "│   ")
            walk(kid, inner, i == len(kids) - 1, False)

    walk(ElelemError, "", True, True)
    return "\n".join(lines)


def test_every_error_is_an_elelem_error() -> None:
    classes = error_classes()
    assert len(classes) > 40
    assert sorted(c.__qualname__ for c in classes if not issubclass(c, ElelemError)) == []


def test_errors_docstring_draws_the_tree_of_every_error() -> None:
    import elelem.errors

    doc = elelem.errors.__doc__ or ""
    drawn = "\n".join(
        line.removeprefix("    ")
        for line in doc[doc.index("::\n\n") + 3 :].splitlines()
        if line.startswith("    ")
    )
    assert drawn == draw_tree(error_classes())
