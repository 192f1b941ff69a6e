"""The import graph of the package: layers point one way, and modules do not import in a circle.

Parsed with ``ast`` from the source, so an import inside a function or under TYPE_CHECKING
counts as much as one at the top of a module.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import orch_review

PACKAGE = Path(orch_review.__file__).parent

# Layers that describe, configure, scope or publish a review; none may depend on the engine.
ENGINE_FREE = ("config", "scope", "findings", "reporters", "hosts")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, ast.Module]:
    return {
        _module_name(path): ast.parse(path.read_text(encoding="utf-8"), str(path))
        for path in sorted(PACKAGE.rglob("*.py"))
    }


MODULES = _modules()


def _resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute name ``from ... import`` refers to in ``module``."""
    if node.level == 0:
        return node.module or ""
    is_package = (PACKAGE.parent / module.replace(".", "/") / "__init__.py").exists()
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _imported(module: str, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """Every module of the package that ``node`` imports (``from pkg import mod`` names mod)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        source = _resolve(module, node)
        names = [source, *(f"{source}.{alias.name}" for alias in node.names)]
    for name in names:
        if name in MODULES:
            yield name


def imports(module: str, tree: ast.Module, *, top_level_only: bool) -> set[str]:
    """The package modules ``module`` (parsed as ``tree``) imports: anywhere, or only those
    imported when it is first imported (module body, not functions, not TYPE_CHECKING)."""
    if not top_level_only:
        nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    else:
        nodes = list(_top_level_imports(tree.body))
    return {name for node in nodes for name in _imported(module, node)} - {module}


def _top_level_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    for stmt in body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            yield stmt
        elif isinstance(stmt, ast.If):
            if not _is_type_checking(stmt.test):
                yield from _top_level_imports(stmt.body)
            yield from _top_level_imports(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, stmt.orelse, stmt.finalbody, *(h.body for h in stmt.handlers)):
                yield from _top_level_imports(block)
        elif isinstance(stmt, ast.With):
            yield from _top_level_imports(stmt.body)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle in ``graph`` as ``[a, b, ..., a]``, or None."""
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(node: str) -> list[str] | None:
        path.append(node)
        on_path.add(node)
        for target in sorted(graph.get(node, ())):
            if target in on_path:
                return [*path[path.index(target) :], target]
            if target not in done:
                found = visit(target)
                if found:
                    return found
        path.pop()
        on_path.discard(node)
        done.add(node)
        return None

    for start in sorted(graph):
        if start not in done:
            found = visit(start)
            if found:
                return found
    return None


def test_the_parser_sees_imports_everywhere_and_resolves_relative_ones() -> None:
    tree = ast.parse(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "from . import records\n"
        "from ..engine.api.budget import Ledger\n"
        "import orch_review.scope.git\n"
        "if TYPE_CHECKING:\n"
        "    from orch_review.engine.agents import workflow\n"
        "def f():\n"
        "    from orch_review.engine.review import review\n"
    )
    anywhere = imports("orch_review.findings._probe", tree, top_level_only=False)
    top = imports("orch_review.findings._probe", tree, top_level_only=True)
    assert anywhere == {
        "orch_review.findings",
        "orch_review.findings.records",
        "orch_review.engine.agents",
        "orch_review.engine.api.budget",
        "orch_review.scope.git",
        "orch_review.engine.agents.workflow",
        "orch_review.engine.review",
    }
    assert top == {
        "orch_review.findings",
        "orch_review.findings.records",
        "orch_review.engine.api.budget",
        "orch_review.scope.git",
    }


def test_find_cycle_reports_the_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_config_scope_records_reporters_and_hosts_do_not_import_the_engine() -> None:
    offenders = sorted(
        f"{module} imports {target}"
        for module, tree in MODULES.items()
        if module.split(".")[1:2] and module.split(".")[1] in ENGINE_FREE
        for target in imports(module, tree, top_level_only=False)
        if target.split(".")[:2] == ["orch_review", "engine"]
    )
    assert len([m for m in MODULES if m.startswith("orch_review.findings.")]) >= 4
    assert len([m for m in MODULES if m.startswith("orch_review.scope.")]) >= 10
    assert offenders == []


def _defined_at_top(tree: ast.Module) -> set[str]:
    """Names a module defines itself (not those it imports)."""
    names: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Assign):
            names.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            names.add(stmt.target.id)
    return names


def test_engine_free_layers_take_from_the_front_door_only_what_it_defines() -> None:
    """``core`` imports the engine; a name it merely re-exports (``EventSink`` once) would
    let an engine-free layer reach the engine through it."""
    core = _defined_at_top(MODULES["orch_review.core"])
    offenders = sorted(
        f"{module} imports {alias.name} from orch_review.core"
        for module, tree in MODULES.items()
        if module.split(".")[1:2] and module.split(".")[1] in ENGINE_FREE
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and _resolve(module, node) == "orch_review.core"
        for alias in node.names
        if alias.name not in core
    )
    assert offenders == []


def test_events_and_errors_import_nothing_of_the_package() -> None:
    for low in ("orch_review.events", "orch_review.errors", "orch_review.config.choices"):
        assert imports(low, MODULES[low], top_level_only=False) == set(), low


def _package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])


def test_config_and_findings_do_not_import_each_other() -> None:
    """Configuration is read before a review and findings come out of it: findings may use
    configuration's choices, configuration never the findings' records."""
    offenders = sorted(
        f"{module} imports {target}"
        for module, tree in MODULES.items()
        if _package(module) == "orch_review.config"
        for target in imports(module, tree, top_level_only=False)
        if _package(target) == "orch_review.findings"
    )
    assert offenders == []


def test_no_import_cycle_between_modules() -> None:
    graph = {module: imports(module, tree, top_level_only=True) for module, tree in MODULES.items()}
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


# Hosts: each an adapter under hosts/, none importing another (reviewdog's service/*,
# pr-agent's git_providers/); what they share is in hosts/ itself.
HOSTS = ("github", "gitlab")
# Above the library's front door: they may take names from it.
FRONT_ENDS = ("cli", "mcp_server")


def _layer(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def adapter_of(module: str) -> str:
    """The adapter ``module`` is in (``github`` for ``orch_review.hosts.github.api``), or ""."""
    parts = module.split(".")
    return parts[2] if parts[1:2] == ["hosts"] and len(parts) > 3 else ""


def _imports_of(layer: str) -> set[str]:
    return {
        target
        for module, tree in MODULES.items()
        if _layer(module) == layer
        for target in imports(module, tree, top_level_only=False)
    }


def test_no_adapter_imports_another() -> None:
    adapters = {adapter_of(m) for m in MODULES if adapter_of(m)}
    assert adapters >= set(HOSTS)
    offenders = sorted(
        f"{module} imports {target}"
        for module, tree in MODULES.items()
        if adapter_of(module)
        for target in imports(module, tree, top_level_only=False)
        if adapter_of(target) and adapter_of(target) != adapter_of(module)
    )
    assert offenders == []


def test_the_shared_host_pieces_import_no_adapter() -> None:
    """``hosts/*.py`` is what every adapter may use: it never knows which host it serves."""
    shared = [m for m in MODULES if _layer(m) == "hosts" and not adapter_of(m)]
    assert len(shared) >= 8
    offenders = sorted(
        f"{module} imports {target}"
        for module in shared
        for target in imports(module, MODULES[module], top_level_only=False)
        if adapter_of(target)
    )
    assert offenders == []


def test_nothing_below_the_command_line_imports_a_host_adapter() -> None:
    """The review, its records and its tools never know which host they serve: only the
    command line picks an adapter (through the registry in ``hosts``)."""
    offenders = sorted(
        f"{module} imports {target}"
        for module, tree in MODULES.items()
        if _layer(module) not in ("hosts", "cli")
        for target in imports(module, tree, top_level_only=False)
        if adapter_of(target)
    )
    assert offenders == []


def test_only_the_front_ends_take_names_from_the_package_front_door() -> None:
    """A name such as ``__version__`` comes from the leaf that defines it: the front door
    re-exports the whole library, so importing from it climbs back up to the top."""
    offenders = sorted(
        f"{module} imports {alias.name} from orch_review"
        for module, tree in MODULES.items()
        if _layer(module) not in FRONT_ENDS
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and _resolve(module, node) == "orch_review"
        for alias in node.names
        if f"orch_review.{alias.name}" not in MODULES
    )
    assert "orch_review.version" in MODULES
    assert offenders == []


def package_graph(*, top_level_only: bool) -> dict[str, set[str]]:
    """Which of the package's top-level packages and modules (its "layers") import which.
    The front door itself is left out: Python runs it before any submodule, whatever the
    submodule imports."""
    graph: dict[str, set[str]] = {_layer(m): set() for m in MODULES if _layer(m)}
    for module, tree in MODULES.items():
        for target in imports(module, tree, top_level_only=top_level_only):
            if _layer(module) and _layer(target) and _layer(module) != _layer(target):
                graph[_layer(module)].add(_layer(target))
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of nodes that import each other in a circle (strongly connected components
    of more than one node), each sorted, in sorted order."""
    reaches = {node: _reachable(graph, node) for node in graph}
    groups = {
        frozenset(other for other in reaches[node] if node in reaches.get(other, set()))
        for node in graph
    }
    return sorted(sorted(group) for group in groups if len(group) > 1)


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every node reached from ``start`` (itself included)."""
    seen = {start}
    todo = [start]
    while todo:
        for target in graph.get(todo.pop(), set()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_circles_finds_each_circle_once() -> None:
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": {"d"}, "d": {"c"}, "e": {"a"}}
    assert circles(graph) == [["a", "b"], ["c", "d"]]
    assert circles({"a": {"b"}, "b": set()}) == []


# The floors, lowest first (docs/architecture.md): a layer imports from its own floor or
# below, never above. Leaves are single modules that know nothing of the package; scope
# (with all of git) reads what is under review; config reads the settings; findings holds
# the records a review produces; then what prices, renders or applies them; the engine;
# the library's front door (core); and what a user or a host runs (hosts/ takes github/ and
# gitlab/ as adapters).
LEAVES = (
    "environment",
    "errors",
    "events",
    "programs",
    "quoting",
    "sanitize",
    "schemas",
    "tempdirs",
    "trust",
    "version",
    "waiting",
    "wording",
)
FLOORS: tuple[tuple[str, ...], ...] = (
    LEAVES,
    ("scope",),
    ("config",),
    ("findings",),
    ("cost", "fixes", "reporters"),
    ("engine",),
    ("core",),
    ("__main__", "cli", "eval", "hook", "hosts", "mcp_server"),
)


def _floor(layer: str) -> int:
    return next(i for i, floor in enumerate(FLOORS) if layer in floor)


def test_every_layer_stands_on_a_floor() -> None:
    placed = {layer for floor in FLOORS for layer in floor}
    assert sorted({_layer(m) for m in MODULES if _layer(m)} - placed) == []


def test_no_layer_imports_from_a_floor_above_its_own() -> None:
    offenders = sorted(
        f"{module} imports {target}"
        for module, tree in MODULES.items()
        if _layer(module)
        for target in imports(module, tree, top_level_only=False)
        if _layer(target) and _floor(_layer(target)) > _floor(_layer(module))
    )
    assert offenders == []


def test_scope_imports_neither_config_nor_findings() -> None:
    assert sorted(t for t in _imports_of("scope") if _layer(t) in ("config", "findings")) == []


def test_leaves_import_nothing_of_the_package_but_the_errors() -> None:
    """``errors`` itself imports nothing (see above); a leaf may raise one of its errors."""
    offenders = sorted(
        f"{module} imports {target}"
        for module, tree in MODULES.items()
        if _layer(module) in LEAVES
        for target in imports(module, tree, top_level_only=False)
        if target not in ("orch_review", "orch_review.errors")
    )
    assert offenders == []


def test_no_circle_between_layers_counting_imports_anywhere() -> None:
    assert circles(package_graph(top_level_only=False)) == []


def test_below_the_engine_no_modules_import_each_other_in_a_circle() -> None:
    """Imports inside functions count: ``config.settings`` importing ``config.ignored`` in a
    function while ``ignored`` imports ``settings`` was such a circle. ``from orch_review
    import x`` names the front door, which Python runs before anything else: left out."""
    below = {layer for floor in FLOORS[: _floor("engine")] for layer in floor}
    graph = {
        module: imports(module, tree, top_level_only=False) - {"orch_review"}
        for module, tree in MODULES.items()
        if _layer(module) in below
    }
    assert circles(graph) == []


# A folder is a room with one job; past about two dozen modules it is really several rooms.
MAX_MODULES_PER_FOLDER = 24


def test_no_package_folder_holds_more_than_24_modules() -> None:
    folders = {path.parent for path in PACKAGE.rglob("__init__.py")}
    crowded = sorted(
        f"{folder.relative_to(PACKAGE.parent)}: {count} modules"
        for folder in folders
        if (count := len(list(folder.glob("*.py")))) > MAX_MODULES_PER_FOLDER
    )
    assert len(folders) >= 10
    assert crowded == []


# The engine's rooms (see the architecture map). The modules directly in engine/ are its top.
ENGINE_ROOMS = ("agents", "api", "memory", "proofs", "shell")


def _engine_room(module: str) -> str | None:
    """The room of an engine module ("top" for those directly in engine/), None outside."""
    parts = module.split(".")
    if parts[:2] != ["orch_review", "engine"] or len(parts) < 3:
        return None
    return parts[2] if parts[2] in ENGINE_ROOMS else "top"


def _room_imports(room: str) -> set[tuple[str, str]]:
    """(module, target) for every engine module ``room`` imports from another room."""
    return {
        (module, target)
        for module, tree in MODULES.items()
        if _engine_room(module) == room
        for target in imports(module, tree, top_level_only=False)
        if _engine_room(target) not in (None, room)
    }


def test_the_engine_folders_are_its_rooms() -> None:
    folders = sorted(path.parent.name for path in (PACKAGE / "engine").glob("*/__init__.py"))
    assert folders == sorted(ENGINE_ROOMS)


def test_the_shell_room_imports_no_other_room_of_the_engine() -> None:
    """The shell boundary (the shell, the sandbox layers, the no-shell tools) is what a
    security reviewer reads: it must make sense alone."""
    assert any(_engine_room(m) == "shell" for m in MODULES)
    assert sorted(_room_imports("shell")) == []


def test_the_api_room_takes_from_the_shell_room_only_the_bash_tool() -> None:
    """The client offers the bash tool's client definition to servers without Anthropic's."""
    taken = {target for _, target in _room_imports("api")}
    assert taken <= {"orch_review.engine.shell", "orch_review.engine.shell.bash"}


def test_no_room_imports_the_top_of_the_engine() -> None:
    offenders = sorted(
        f"{module} imports {target}"
        for room in ENGINE_ROOMS
        for module, target in _room_imports(room)
        if _engine_room(target) == "top"
    )
    assert offenders == []


def test_only_the_top_of_the_engine_imports_the_proofs_room() -> None:
    offenders = sorted(
        f"{module} imports {target}"
        for room in ENGINE_ROOMS
        for module, target in _room_imports(room)
        if _engine_room(target) == "proofs"
    )
    assert offenders == []


def test_the_agents_take_from_memory_only_the_journal_and_reused_findings() -> None:
    """The rest of memory (conversation, follow-ups, re-review scope, last report) stands
    on the agents; the journal itself imports nothing of the engine."""
    taken = {target for _, target in _room_imports("agents") if _engine_room(target) == "memory"}
    assert taken <= {
        "orch_review.engine.memory",
        "orch_review.engine.memory.journal",
        "orch_review.engine.memory.reuse",
    }
    journal = "orch_review.engine.memory.journal"
    assert {
        t for t in imports(journal, MODULES[journal], top_level_only=False) if _engine_room(t)
    } == set()
