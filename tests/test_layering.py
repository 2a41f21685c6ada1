"""The generator's stages import one way: load -> validate -> model -> plan -> emit -> write.

Every module of ``ttlgen/`` is parsed (imports inside functions and under TYPE_CHECKING
included, since a lazy import still couples the two modules) and each import is checked
against the stage order, then the whole module graph is checked for cycles.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent.parent / "ttlgen"

# Modules every stage may use: they import nothing of ttlgen but each other.
FOUNDATION = (
    "ttlgen", "ttlgen.errors", "ttlgen.interrupt", "ttlgen.naming", "ttlgen.cache", "ttlgen.release_headers", "ttlgen.resolver", "ttlgen.schemas", "ttlgen.abi_runtime",
)
STAGES = (
    ("spec", ("ttlgen.spec",)),
    ("validate", ("ttlgen.validate",)),
    ("model", ("ttlgen.model",)),
    ("plan", ("ttlgen.plan",)),
    ("emit", ("ttlgen.emit",)),
    ("write", ("ttlgen.tree", "ttlgen.tree_lock", "ttlgen.fs_steps", "ttlgen.write")),
    ("commands", ("ttlgen.pipeline", "ttlgen.scaffold", "ttlgen.cli", "ttlgen.__main__", "ttlgen.resolve", "ttlgen.run", "ttlgen.accuracy_limits", "ttlgen.commands", "ttlgen.compat", "ttlgen.provenance", "ttlgen.upstream")),
)
# The emulator consumes generated kernels like a runtime does: it sees no generator stage.
DEVICE = "ttlgen.device"

# Edges the pipeline redesign (issue 8) is removing; this list may only shrink.
MIGRATING: frozenset[tuple[str, str]] = frozenset()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE_ROOT.rglob("*.py")) if "__pycache__" not in p.parts}


def _imports(name: str, path: Path, known: set[str]) -> Iterator[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            # `from pkg import sub` imports the submodule when there is one.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            if target != "ttlgen" and not target.startswith("ttlgen."):
                continue
            if target in known and target != name:
                yield target
            # Importing a.b.c also runs a/__init__ and a/b/__init__, except the packages
            # the importer itself lives in, which Python has initialised before it runs.
            parts = target.split(".")
            for i in range(1, len(parts)):
                prefix = ".".join(parts[:i])
                if prefix in known and not _within(name, (prefix,)):
                    yield prefix


@functools.cache
def _graph() -> dict[str, set[str]]:
    # Parsed once per test process: four tests read it, none changes it.
    modules = _modules()
    known = set(modules)
    return {name: set(_imports(name, path, known)) for name, path in modules.items()}


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _rank(name: str) -> int | None:
    """0 for foundation modules, 1.. for the stages in order, None for the emulator."""
    if _within(name, FOUNDATION[1:]) or name == "ttlgen":
        return 0
    if _within(name, (DEVICE,)):
        return None
    for index, (_, prefixes) in enumerate(STAGES, start=1):
        if _within(name, prefixes):
            return index
    raise AssertionError(f"module {name} belongs to no stage; add it to tests/test_layering.py")


def test_every_module_belongs_to_a_stage() -> None:
    for name in _graph():
        _rank(name)


def test_imports_never_point_from_an_earlier_stage_to_a_later_one() -> None:
    wrong = []
    for name, targets in _graph().items():
        mine = _rank(name)
        for target in sorted(targets):
            theirs = _rank(target)
            if (name, target) in MIGRATING:
                continue
            if mine is None:  # the emulator: foundation and itself only
                if theirs not in (0, None):
                    wrong.append(f"{name} (device) imports {target}")
            elif theirs is None:
                if not _within(name, STAGES[-1][1]):
                    wrong.append(f"{name} imports the emulator ({target}); only commands may")
            elif theirs > mine:
                wrong.append(f"{name} ({_stage(mine)}) imports {target} ({_stage(theirs)})")
    assert not wrong, "imports against the stage order:\n" + "\n".join(wrong)


def test_the_module_graph_has_no_import_cycle() -> None:
    graph = {name: {t for t in targets if (name, t) not in MIGRATING} for name, targets in _graph().items()}
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join([*c, c[0]]) for c in cycles)


def test_migration_exceptions_still_exist() -> None:
    # An exception that no longer matches anything must be deleted, so the list only shrinks.
    graph = _graph()
    stale = [f"{a} -> {b}" for a, b in sorted(MIGRATING) if b not in graph.get(a, set())]
    assert not stale, "remove from MIGRATING: " + ", ".join(stale)


def _stage(rank: int) -> str:
    return "foundation" if rank == 0 else STAGES[rank - 1][0]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_checker_sees_a_function_local_backward_import(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text("def f():\n    from ttlgen.emit import kernels\n", encoding="utf-8")
    known = {"ttlgen", "ttlgen.emit", "ttlgen.emit.kernels"}
    assert set(_imports("ttlgen.model.mod", source, known)) == {"ttlgen.emit", "ttlgen.emit.kernels"}


def test_the_checker_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
