"""Every identifier of the ABI and program outputs comes from the model's one naming pass.

Two things of the specs that would get the same identifier in any generated language are
a located error naming both; over the real specs every identifier is defined once, and the
naming pass sees exactly the identifiers the generated files define.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from abi_support import REPO, copy_specs, spec_errors

from tests.conftest import run_cli
from ttlgen.errors import DiagnosticSink
from ttlgen.model import layout as layout_model
from ttlgen.model import names as names_model
from ttlgen.model import namespaces
from ttlgen.model import programs as programs_model
from ttlgen.pipeline import validate_specs

LAYOUT = "abi/komorebi.yaml"
PROGRAM = "programs/mapcollect.yaml"


def _edit(specs: Path, file: str, old: str, new: str) -> None:
    path = specs / file
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _located(specs: Path, message: str) -> str:
    """``message`` with each ``[[file@text]]`` replaced by ``specs/file:line`` of the one
    line of ``file`` holding ``text``."""

    def line(match: re.Match[str]) -> str:
        file, text = match[1], match[2]
        lines = (specs / file).read_text(encoding="utf-8").splitlines()
        (number,) = [i + 1 for i, content in enumerate(lines) if text in content]
        return f"specs/{file}:{number}"

    return re.sub(r"\[\[([^@]+)@(.+?)\]\]", line, message)


GROUP_COUNT = "[[abi/komorebi.yaml@{name: count, lsb: 16, bits: 16]]"
MASK_MESSAGE = (
    GROUP_COUNT + ":16: words.group.fields[1].name: the mask of bit field 'count' of word 'group' gets the C name "
    "KM_GROUP_COUNT_MASK, the C++ name km::kGroupCountMask and the Python name komorebi_abi.layout.GROUP_COUNT_MASK, "
    "which constant 'group_count_mask' also gets; rename one of them\n"
    "  note: [[abi/komorebi.yaml@group_count_mask]]:12: constants[1].name: constant 'group_count_mask' comes from here"
)


def _add_group_count_mask(specs: Path) -> None:
    _edit(specs, LAYOUT, "  - name: behind_port\n", "  - {name: group_count_mask, value: 3}\n  - name: behind_port\n")


def test_a_constant_named_like_a_derived_mask_is_a_located_error_naming_both(tmp_path: Path) -> None:
    # Regression: the header defined KM_GROUP_COUNT_MASK twice and did not compile.
    specs = copy_specs(tmp_path)
    _add_group_count_mask(specs)
    assert spec_errors(specs) == [_located(specs, MASK_MESSAGE)]


def test_validate_reports_the_derived_mask_collision(spec_copy: Path) -> None:
    _add_group_count_mask(spec_copy)
    validated = run_cli("validate", "--specs", spec_copy)
    assert validated.exit_code == 2
    assert _located(spec_copy, MASK_MESSAGE) in validated.stderr


def test_build_refuses_the_derived_mask_collision_and_writes_nothing(spec_copy: Path, tmp_path: Path) -> None:
    _add_group_count_mask(spec_copy)
    out = tmp_path / "out"
    built = run_cli("build", "--specs", spec_copy, "--out", out)
    assert built.exit_code == 2
    assert _located(spec_copy, MASK_MESSAGE) in built.stderr
    assert not out.exists()


# (id, edits as (file, old, new), the complete list of messages)
COLLISIONS = [
    (
        "c-macro",  # only C has the landing check, so only C collides
        [(LAYOUT, "    landed: landed\n", "    landed: hdr_slot_mask\n")],
        [
            "[[abi/komorebi.yaml@landed: hdr_slot_mask]]:13: structs.command.landed: the landing check of struct 'command' "
            "gets the C name KM_HDR_SLOT_MASK, which the mask of bit field 'slot' of word 'hdr' also gets; rename one of them\n"
            "  note: [[abi/komorebi.yaml@{name: slot, lsb: 16, bits: 8, indexes: ring, doc]]:16: words.hdr.fields[2].name: "
            "the mask of bit field 'slot' of word 'hdr' comes from here",
        ],
    ),
    (
        "c-macro-of-the-header",
        [(LAYOUT, "  - name: behind_port\n", "  - {name: static_assert, value: 3}\n  - name: behind_port\n")],
        [
            "[[abi/komorebi.yaml@static_assert]]:12: constants[1].name: constant 'static_assert' gets the C name "
            "KM_STATIC_ASSERT, which is the static-assert macro of komorebi/abi/km_abi.h; rename it",
        ],
    ),
    (
        "cpp-constant",  # camel case joins the digit to the word before it; snake case does not
        [(LAYOUT, "  - name: behind_port\n", "  - {name: queue_depth2, value: 3}\n  - {name: queue_depth_2, value: 4}\n  - name: behind_port\n")],
        [
            "[[abi/komorebi.yaml@queue_depth_2]]:12: constants[2].name: constant 'queue_depth_2' gets the C++ name "
            "km::kQueueDepth2, which constant 'queue_depth2' also gets; rename one of them\n"
            "  note: [[abi/komorebi.yaml@queue_depth2,]]:12: constants[1].name: constant 'queue_depth2' comes from here",
        ],
    ),
    (
        "python-builder-parameter",  # map_command already takes the group's count
        [(PROGRAM, "      - {name: tiles, doc: number of tiles across the group}\n", "      - {name: count, doc: number of tiles across the group}\n")],
        [
            "[[programs/mapcollect.yaml@{name: count,]]:16: handlers[0].args[2].name: argument 'count' of handler 'map' of "
            "program 'mapcollect' gets the Python name count (a parameter of komorebi_abi.programs.mapcollect.map_command), "
            "which bit field 'count' of word 'group' also gets; rename one of them\n"
            "  note: " + GROUP_COUNT + ":16: words.group.fields[1].name: bit field 'count' of word 'group' comes from here",
        ],
    ),
    (
        "python-module-constant",
        [(LAYOUT, "  - name: behind_port\n", "  - {name: word_bits, value: 32}\n  - name: behind_port\n")],
        [
            "[[abi/komorebi.yaml@word_bits]]:12: constants[1].name: constant 'word_bits' gets the Python name "
            "komorebi_abi.layout.WORD_BITS, which is the word width the generated layout module defines; rename it",
        ],
    ),
    (
        "python-keyword",
        [(PROGRAM, "      - {name: src, doc: DRAM address of the input tiles}\n", "      - {name: from, doc: DRAM address of the input tiles}\n")],
        [
            "[[programs/mapcollect.yaml@{name: from,]]:16: handlers[0].args[0].name: argument 'from' of handler 'map' of "
            "program 'mapcollect' gets the Python name from (a parameter of komorebi_abi.programs.mapcollect.map_command) "
            "and the Python name komorebi_abi.programs.mapcollect.MapArgs.from, which is a keyword of Python; rename it",
        ],
    ),
    (
        "cpp-keyword",  # the C header is also compiled as C++
        [(LAYOUT, "      - {name: compute, lsb: 16, bits: 8, enum: end}\n", "      - {name: compute, lsb: 16, bits: 8, enum: end}\n      - {name: new, lsb: 24, bits: 8}\n")],
        [
            "[[abi/komorebi.yaml@{name: new,]]:16: words.ends.fields[3].name: bit field 'new' of word 'ends' gets the C name "
            "new (a parameter of km_ends_pack), which is a keyword of C++; rename it",
        ],
    ),
]


@pytest.mark.parametrize(("edits", "messages"), [c[1:] for c in COLLISIONS], ids=[c[0] for c in COLLISIONS])
def test_two_things_sharing_an_identifier_is_a_located_error(
    tmp_path: Path, edits: list[tuple[str, str, str]], messages: list[str]
) -> None:
    specs = copy_specs(tmp_path)
    for file, old, new in edits:
        _edit(specs, file, old, new)
    assert spec_errors(specs) == [_located(specs, m) for m in messages]


# -- the real specs ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> tuple[namespaces.Namespaces, layout_model.LayoutModel, programs_model.ProgramModel]:
    documents = validate_specs(copy_specs(tmp_path_factory.mktemp("names")))
    sink = DiagnosticSink()
    layouts = layout_model.build(documents, sink)
    programs = programs_model.build(documents, sink, layouts)
    assert not sink.diagnostics
    return namespaces.scan(layouts, programs), layouts, programs


def _records(value: object) -> Iterator[object]:
    """Every record reachable from ``value`` through dataclass and named-tuple fields and tuples."""
    if hasattr(value, "_fields"):  # a named tuple: the model's name records
        yield value
        for name in value._fields:
            yield from _records(getattr(value, name))
    elif isinstance(value, tuple):
        for item in value:
            yield from _records(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        yield value
        for f in dataclasses.fields(value):
            yield from _records(getattr(value, f.name))


def test_every_kind_of_name_is_derived_for_the_real_specs(
    scanned: tuple[namespaces.Namespaces, layout_model.LayoutModel, programs_model.ProgramModel],
) -> None:
    # So the tests below, which read the real specs' outputs, cover every naming rule.
    _, layouts, programs = scanned
    kinds = {
        obj for obj in vars(names_model).values()
        if isinstance(obj, type) and issubclass(obj, tuple) and obj.__module__ == names_model.__name__
    }
    assert len(kinds) > 15
    records = [r for r in _records((layouts.layouts, programs.programs)) if type(r) in kinds]
    missing = [
        f"{kind.__name__}.{field}"
        for kind in sorted(kinds, key=lambda k: k.__name__)
        for field in kind._fields
        if not any(type(r) is kind and getattr(r, field) is not None for r in records)
    ]
    assert not missing


def _c_definitions(include: Path) -> dict[tuple[str, str], list[str]]:
    """Identifiers defined by the C and C++ headers, by the scope the naming pass gives them."""
    found: dict[tuple[str, str], list[str]] = {}
    for header in sorted(include.rglob("*.h*")):
        text = header.read_text(encoding="utf-8")
        # The static-assert macro has one definition per branch of its #if.
        conditional = re.search(r"^#if defined\(__cplusplus\).*?^#endif$", text, re.M | re.S)
        outside = text if conditional is None else text.replace(conditional[0], "")
        if conditional is not None:
            found.setdefault(("C", "{}"), []).extend(sorted(set(re.findall(r"^#define (\w+)", conditional[0], re.M))))
        found.setdefault(("C", "{}"), []).extend(re.findall(r"^#define (\w+)", outside, re.M))
        namespace = re.search(r"^namespace (\w+) \{", text, re.M)
        if namespace is None:  # the C header
            functions = re.findall(r"^static inline \w+ (\w+)\(([^)]*)\)", text, re.M)
            found[("C", "{}")] += [name for name, _ in functions]
            for name, params in functions:
                if name.endswith("_pack"):
                    label = f"{{}} (a parameter of {name})"
                    found[("C", label)] = [p.split()[-1] for p in params.split(",")] + ["word"]
            for tag, body, c_type in re.findall(r"^typedef struct (\w+) \{\n(.*?)^\} (\w+);", text, re.M | re.S):
                found[("C", "{}")] += [tag, c_type]
                found[("C", f"{{}} (a member of {c_type})")] = re.findall(r"^    uint32_t (\w+)", body, re.M)
        else:
            label = namespace[1] + "::{}"
            names = re.findall(r"^constexpr std::uint32_t (\w+) =", text, re.M)
            names += re.findall(r"^enum (\w+) :", text, re.M)
            names += re.findall(r"^    (k\w+) = ", text, re.M)
            names += re.findall(r"^inline std::uint32_t (\w+)\(", text, re.M)
            found.setdefault(("C++", label), []).extend(names)
    return found


def _bound(body: list[ast.stmt]) -> list[str]:
    """Names a module or class body binds (dunders aside)."""
    names: list[str] = []
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names += [a.asname or a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ClassDef | ast.FunctionDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [n for n in names if not n.startswith("__")]


def _locals(function: ast.FunctionDef) -> list[str]:
    args = function.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
    return names


def _python_definitions(python: Path) -> dict[tuple[str, str], list[str]]:
    """Identifiers defined by the generated Python modules, by the naming pass's scopes."""
    found: dict[tuple[str, str], list[str]] = {}
    for path in sorted(python.rglob("*.py")):
        parts = path.relative_to(python).with_suffix("").parts
        if parts[-1].startswith("_"):
            if parts[-1] == "__init__" and parts[-2] == "programs":
                found[("Python", ".".join(parts[:-1]) + ".{}")] = _bound(ast.parse(path.read_text(encoding="utf-8")).body)
            continue  # the package's __init__ re-exports the codec; _words is the same for every layout
        module = ".".join(parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found[("Python", module + ".{}")] = _bound(tree.body)
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                if _bound(node.body):  # NotLandedError has a docstring only
                    found[("Python", f"{module}.{node.name}.{{}}")] = _bound(node.body)
                for method in node.body:
                    if isinstance(method, ast.FunctionDef) and method.name in ("__post_init__", "unpack") and node.name == "Command":
                        found[("Python", f"{{}} (a local of {module}.{node.name}.{method.name})")] = sorted(set(_locals(method)))
            elif isinstance(node, ast.FunctionDef) and node.name.endswith("_command"):
                found[("Python", f"{{}} (a parameter of {module}.{node.name})")] = _locals(node)
    return found


def _loads(nodes: list[ast.AST]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _python_uses(python: Path) -> dict[tuple[str, str], set[str]]:
    """Names the generated Python relies on that a spec-derived name in a scope would hide:
    builtins anywhere in a module (for its module-level names); builtins and module names
    a class body itself reads (for its attributes); those a function reads (for its locals).
    Spec names in class and function scopes are snake_case, so only such names count there."""
    found: dict[tuple[str, str], set[str]] = {}
    for path in sorted(python.rglob("*.py")):
        parts = path.relative_to(python).with_suffix("").parts
        if parts[-1].startswith("_"):
            continue
        module = ".".join(parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        globals_ = set(_bound(tree.body))

        def hidable(names: set[str], globals_: set[str] = globals_) -> set[str]:
            return {n for n in names if n[0].islower() and (hasattr(builtins, n) or n in globals_)}

        found[("Python", module + ".{}")] = {n for n in _loads([tree]) if hasattr(builtins, n)}
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            body: list[ast.AST] = []
            for statement in node.body:
                if isinstance(statement, ast.FunctionDef):
                    args = statement.args
                    body += [*statement.decorator_list, *args.defaults, *(d for d in args.kw_defaults if d is not None)]
                    body += [a.annotation for a in (*args.args, *args.kwonlyargs) if a.annotation is not None]
                    body += [statement.returns] if statement.returns is not None else []
                    if node.name == "Command" and statement.name in ("__post_init__", "unpack"):
                        label = f"{{}} (a local of {module}.{node.name}.{statement.name})"
                        found[("Python", label)] = hidable(_loads(list(statement.body)))
                else:
                    body.append(statement)
            found[("Python", f"{module}.{node.name}.{{}}")] = hidable(_loads(body))
    return found


def test_the_naming_pass_keeps_every_name_the_generated_python_relies_on(
    abi_out: Path, scanned: tuple[namespaces.Namespaces, layout_model.LayoutModel, programs_model.ProgramModel]
) -> None:
    ns = scanned[0]
    scopes = {(scope.language, scope.label): scope for scope in ns.owners}
    uses = {key: names for key, names in _python_uses(abi_out / "python").items() if key in scopes}
    assert len(uses) > 10
    unguarded = {
        key: names - set(ns.taken[scopes[key]]) - set(ns.owners[scopes[key]])
        for key, names in uses.items()
        if names - set(ns.taken[scopes[key]]) - set(ns.owners[scopes[key]])
    }
    assert not unguarded


def test_every_identifier_of_the_real_specs_is_defined_once(abi_out: Path) -> None:
    definitions = {**_c_definitions(abi_out / "include"), **_python_definitions(abi_out / "python")}
    twice = {f"{lang} {label.format(name)}" for (lang, label), names in definitions.items() for name, n in Counter(names).items() if n > 1}
    assert not twice
    assert sum(len(names) for names in definitions.values()) > 500  # the parsers found the files' names


def test_the_naming_pass_sees_exactly_the_identifiers_the_generated_files_define(
    abi_out: Path, scanned: tuple[namespaces.Namespaces, layout_model.LayoutModel, programs_model.ProgramModel]
) -> None:
    ns = scanned[0]
    definitions = {**_c_definitions(abi_out / "include"), **_python_definitions(abi_out / "python")}
    model = {(scope.language, scope.label): set(owners) for scope, owners in ns.owners.items()}
    # Scopes of names that are only checked against keywords: packages and namespaces.
    checked_only = {("Python", "{}"), ("C++", "namespace {}")}
    # The files layouts name by their C prefix, in a directory they share.
    files = {(namespaces.FILES, "tests/{}"): {p.name for p in (abi_out / "tests").iterdir()}}
    definitions.update(files)
    assert set(model) - checked_only == set(definitions)
    differences = {scope: (model[scope] ^ set(names)) for scope, names in definitions.items() if model[scope] != set(names)}
    assert not differences


ABI_TEMPLATES = ("c", "cpp", "docs", "programs", "python/komorebi_abi")
ABI_EMITTERS = ("abi_c", "abi_cpp", "abi_docs", "abi_python", "programs")


def test_abi_templates_and_emitters_derive_no_names() -> None:
    # They print the model's names; a naming filter or the naming rules there would be a
    # second place that derives an identifier, unseen by the collision check.
    templates = [p for d in ABI_TEMPLATES for p in sorted((REPO / "templates" / d).glob("*")) if p.is_file()]
    assert templates
    filters = [f"{p.name}: {m[0]}" for p in templates for m in re.finditer(r"\|\s*(upper_snake|snake|camel)\b", p.read_text(encoding="utf-8"))]
    assert not filters
    imports = []
    for name in ABI_EMITTERS:
        tree = ast.parse((REPO / "ttlgen" / "emit" / f"{name}.py").read_text(encoding="utf-8"))
        imports += [
            f"{name}: {node.module}" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module == "ttlgen.naming"
        ]
    assert not imports
