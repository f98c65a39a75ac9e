"""The package's import graph keeps its layers: no cycles, and every import points down.

Every module under ``src/agent_memory`` is parsed with :mod:`ast` (nothing is imported) and
every import of the package's own modules is collected: at the top of a module, inside
functions and under ``if TYPE_CHECKING:``, absolute and relative alike. ``from P import N``
counts as an import of the module ``P.N`` when that is a module, else of ``P``; importing
``P.Q`` does not count as importing the package ``P`` (its ``__init__`` runs, but that is
Python's business, not a dependency we wrote).

The layers, lowest first (a folder's name stands for every module in it; DESIGN.md,
docs/architecture.md):

1. ``errors``, then ``records/`` (the pure core): ``records/`` imports nothing of ours but
   ``errors``.
2. The ports and adapters ``stores/``, ``log/``, ``search/`` never import a service (below)
   nor the facade ``memory``.
3. The services ``write/``, ``recall/``, ``governance/``, ``jobs/``, ``metamemory/``,
   ``sync/``, ``transfer/``, ``doctor/`` never import ``memory`` (the facade composes them,
   not the reverse; a service that needs another takes it through its constructor).
4. The front ends ``cli/``, ``mcp/``, ``ui/`` use the facade and public types only, which
   here means exactly: no module outside the front ends imports one of them; a front end
   imports no private name (``_x``) of a module outside its own folder; and a front end
   imports the adapters of ``stores/``, ``log/`` and ``search/`` only through their public
   modules (it may not import ``stores.sqlite``, ``search.fts``… but only the port modules
   and helpers named, each with its reason, in :data:`FRONT_END_ADAPTER_MODULES`).
   ``__main__`` and ``demo`` count as front ends (they drive the CLI).
5. Nowhere is a private name (``_x``) imported from a module in another folder.

What is not yet true is listed in :data:`KNOWN_CYCLES` and :data:`KNOWN_VIOLATIONS`, each
entry with the reason; the test fails when a listed entry is gone (delete it: the lists
only shrink) and when anything not listed appears.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "agent_memory"

SERVICES = frozenset({"write", "recall", "governance", "jobs", "metamemory", "sync", "transfer", "doctor"})
PORTS = frozenset({"stores", "log", "search"})
FRONT_ENDS = frozenset({"cli", "mcp", "ui"})
# Root modules that drive a front end: ``python -m agent_memory`` and the demo (which runs the CLI).
FRONT_END_MODULES = frozenset({"agent_memory.__main__", "agent_memory.demo"})

# The modules of stores/, log/ and search/ a front end may import: ports, URL parsing and
# the index-recipe helpers the `search` commands show; never a concrete adapter.
FRONT_END_ADAPTER_MODULES = frozenset(
    {
        "agent_memory.stores.base",
        "agent_memory.stores.urls",
        "agent_memory.log.base",
        # The one reading of a log's head that all of a page's reads share (one_pass, log_head).
        "agent_memory.log.fold",
        "agent_memory.search.base",
        "agent_memory.search.recipes",
        "agent_memory.search.holdings",
        # `agent-memory log verify` checks a Home's JSONL files line by line, with no Memory.
        "agent_memory.log.jsonl",
        # The type of the store `agent-memory records` lists the unreadable notes of.
        "agent_memory.stores.files",
        # The review page follows a Home's notes and log by the one change signal recall reads.
        "agent_memory.stores.file_tokens",
        # The review page says a signature verifies only after the one verified check says so.
        "agent_memory.stores.verified",
        # The one atomic whole-file write (`export`'s MemoryFile, memory.toml when a recipe is switched).
        "agent_memory.stores.file_io",
    }
)

# Cycles that remain (each a strongly connected component, as sorted module names): none. Keep it so.
KNOWN_CYCLES: frozenset[tuple[str, ...]] = frozenset()

# Forbidden imports that remain, as (rule, importer, imported): none. Only remove entries; never add one.
KNOWN_VIOLATIONS: frozenset[tuple[str, str, str]] = frozenset()


@dataclass(frozen=True)
class Import:
    """One import of our own package: ``importer`` imports ``imported`` (both module names)."""

    importer: str
    imported: str
    names: tuple[str, ...]
    line: int


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _owning_module(dotted: str) -> str | None:
    while dotted and dotted not in MODULES:
        dotted = dotted.rpartition(".")[0]
    return dotted or None


def _imports(module: str, path: Path) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _owning_module(alias.name) if alias.name.startswith(PACKAGE) else None
                if target and target != module:
                    yield Import(module, target, (), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            if source != PACKAGE and not source.startswith(PACKAGE + "."):
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                target = full if full in MODULES else _owning_module(source)
                names = () if full in MODULES else (alias.name,)
                if target and target != module:
                    yield Import(module, target, names, node.lineno)


IMPORTS = [found for module, path in MODULES.items() for found in _imports(module, path)]


def _folder(module: str) -> str:
    """Return the top-level part under the package (``records`` for ``agent_memory.records.note``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _home(module: str) -> str:
    """Return the folder a module sits in (its package for a package's ``__init__``)."""
    path = MODULES[module]
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {module: set() for module in MODULES}
    for found in IMPORTS:
        edges[found.importer].add(found.imported)
    return edges


def _cycles(edges: dict[str, set[str]]) -> set[tuple[str, ...]]:
    # Tarjan's strongly connected components, iteratively (no recursion limit to meet).
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: set[tuple[str, ...]] = set()
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.add(tuple(sorted(component)))
    return components


def _front_end(module: str) -> bool:
    return _folder(module) in FRONT_ENDS or module in FRONT_END_MODULES


def _violations() -> set[tuple[str, str, str]]:
    found: set[tuple[str, str, str]] = set()
    for each in IMPORTS:
        source, target = _folder(each.importer), _folder(each.imported)
        rule = None
        if source == "records" and target not in {"records", "errors"}:
            rule = "records imports only errors"
        elif source in PORTS and (target in SERVICES or each.imported == "agent_memory.memory"):
            rule = "ports never import services or memory"
        elif source in SERVICES and each.imported == "agent_memory.memory":
            rule = "services never import memory"
        elif _front_end(each.imported) and not _front_end(each.importer):
            rule = "only front ends import front ends"
        elif _front_end(each.importer) and target in PORTS and each.imported not in FRONT_END_ADAPTER_MODULES:
            rule = "front ends import no adapter"
        if rule:
            found.add((rule, each.importer, each.imported))
        private = [name for name in each.names if name.startswith("_") and not name.startswith("__")]
        if private and _home(each.imported) != _home(each.importer):
            found.add(("no private name across folders", each.importer, each.imported))
    return found


def test_the_walk_sees_the_whole_package() -> None:
    assert "agent_memory.memory" in MODULES
    assert "agent_memory.records.record" in MODULES
    # Imports inside functions and under TYPE_CHECKING are seen (the facade makes both).
    assert any(each.imported == "agent_memory.records.record" for each in IMPORTS)
    assert len(IMPORTS) > 500


def test_the_cycle_finder_finds_cycles_and_only_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert _cycles(graph) == {("a", "b", "c"), ("d", "e")}
    assert _cycles({"a": {"b"}, "b": set()}) == set()
    assert _folder("agent_memory.records.note") == "records"
    assert _folder("agent_memory.memory") == "memory"
    assert _home("agent_memory.records.note") == "agent_memory.records"
    assert _home("agent_memory.records") == "agent_memory.records"


def test_there_is_no_import_cycle_beyond_the_known_ones() -> None:
    cycles = _cycles(_graph())
    new = sorted(cycles - KNOWN_CYCLES)
    gone = sorted(KNOWN_CYCLES - cycles)
    assert not new, f"import cycles (break them; see docs/architecture.md): {new}"
    assert not gone, f"these cycles are gone: remove them from KNOWN_CYCLES: {gone}"


def test_every_import_points_down_the_layers() -> None:
    violations = _violations()
    new = sorted(violations - KNOWN_VIOLATIONS)
    gone = sorted(KNOWN_VIOLATIONS - violations)
    lines = {(i.importer, i.imported): i.line for i in IMPORTS}
    described = [f"{rule}: {a} -> {b} (line {lines.get((a, b))})" for rule, a, b in new]
    assert not new, "forbidden imports:\n" + "\n".join(described)
    assert not gone, f"these are fixed: remove them from KNOWN_VIOLATIONS: {gone}"
