"""Writes each spec kind's JSON Schema to schemas/, specialised with the project's own names.

The schemas shipped in ``ttlgen/schemas`` are generic: an op name is any identifier, and
the CLI checks names against the model itself (with a located message and the closest
valid names). An editor only has the schema, so the copies written here carry the names
this spec tree declares as enums, and an editor flags ``op: tile_slu`` as it is typed.

A shipped schema marks where a name of the project belongs with two keywords that
validators ignore:

- ``"x-names": KIND`` on a string (or ``propertyNames``) schema: the value is a name of
  that kind; it is checked against ``$defs/names.KIND``, an ``enum`` of the names of that
  kind this tree declares (:func:`project_names`).
- ``"x-selects": KIND`` beside a ``$ref``: the referenced definition is written with
  ``"x-names": "selected"`` where its names go; the reference is replaced by a copy of it
  whose selected names are of KIND (``primitive: {$ref: selection, x-selects: primitive}``).

Names that belong to one kernel (its dataflow buffers, kind ``dfb``) are known for the
kernels of the tree: each gets its own copy of the
definitions that reach such a name, and ``kernels.<name>`` refers to it. A kernel the
tree does not have yet is checked with the generic definitions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.emit._text import json_scalar
from ttlgen.model import math_spec, spelling, targets
from ttlgen.model.kernels import Kernel
from ttlgen.model.project import Project
from ttlgen.plan.project import ProjectPlan
from ttlgen.spec.kinds import SpecKind, spec_kinds

SELECTED = "selected"
KERNEL_KIND = "ttlgen.kernel"
KERNEL_DEF = "kernel"  # the definition each kernel of a ttlgen.kernel spec is checked with
KERNEL_SCOPED = ("dfb",)


def project_names(project: Project) -> dict[str, list[str]]:
    """Every kind of name an ``x-names`` may ask for, with the names this tree declares."""
    vocabulary = project.ops.vocabulary
    strategies = [s.name for s in vocabulary.strategies]
    rejected = {t.architecture for t in project.targets.targets if t.rejected is not None}
    usable = [t.name for t in project.targets.targets if t.rejected is None]
    # A device is named by its architecture, typed or as the runtime discovers it (its
    # enumerator, or that in lower case: the names the resolver's lookup accepts).
    devices = list(
        dict.fromkeys(
            name
            for a, runtime in project.targets.architectures
            if a not in rejected
            for name in (a, runtime, runtime and runtime.lower())
            if name
        )
    )
    return {
        "op": [op.name for op in project.ops.ops],
        "element_type": [e.name for e in vocabulary.element_types],
        "primitive": list(vocabulary.primitives),
        "strategy": strategies,
        "strategy_or_fixed": [*strategies, spelling.FIXED, *spelling.PRODUCER_ROUTES],
        "full_fp32_kind": [k.name for k in vocabulary.full_fp32_kinds],
        "target": usable,
        "device_architecture": devices,
        "target_or_architecture": [*usable, *(d for d in devices if d not in usable)],  # an architecture: its default target
        "architecture": [a for a, _ in project.targets.architectures if a not in rejected] + [targets.NO_ARCHITECTURE],
        "runtime_api": [api.name for api in project.targets.runtime_apis] + [targets.NO_RUNTIME_API],
        "relation_table": list(project.targets.relation_tables),
        "math_fidelity": [name for name, _ in project.targets.runtime_enums.math_fidelity],
        "layout": [layout.name for layout in project.layouts.layouts],
        # What a binding may compute: a function of the math spec or a runtime primitive.
        "computation": [*(f.name for f in project.math.functions), *math_spec.PRIMITIVE_NAMES],
    }


def _ref_name(node: Mapping[str, Any]) -> str | None:
    ref = node.get("$ref")
    return ref.removeprefix("#/$defs/") if isinstance(ref, str) and ref.startswith("#/$defs/") else None


def _specialise(node: Any, defs: Mapping[str, Any], names: Mapping[str, Sequence[str]], selected: str | None) -> Any:
    if isinstance(node, list):
        return [_specialise(item, defs, names, selected) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _specialise(value, defs, names, selected) for key, value in node.items()}
    selects, target = node.get("x-selects"), _ref_name(node)
    if isinstance(selects, str) and target is not None:
        inlined = _specialise(defs[target], defs, names, selects)
        out = {**inlined, **{k: v for k, v in out.items() if k not in ("$ref", "x-selects")}}
    kind = out.get("x-names")
    if kind == SELECTED and selected is not None:
        kind = out["x-names"] = selected
    if isinstance(kind, str) and kind in names:
        out["allOf"] = [*out.get("allOf", ()), {"$ref": f"#/$defs/names.{kind}"}]
    return out


def _mentions(node: Any) -> tuple[set[str], set[str]]:
    """(the kinds of name ``node`` asks for itself, the definitions it refers to)."""
    kinds, refs = set(), set()
    stack = [node]
    while stack:
        here = stack.pop()
        if isinstance(here, dict):
            if isinstance(here.get("x-names"), str):
                kinds.add(here["x-names"])
            if (ref := _ref_name(here)) is not None:
                refs.add(ref)
            stack.extend(here.values())
        elif isinstance(here, list):
            stack.extend(here)
    return kinds, refs


def _scoped_definitions(defs: Mapping[str, Any], kinds: Sequence[str]) -> set[str]:
    """Definitions that reach a name of ``kinds``, directly or through other definitions."""
    direct = {name: _mentions(body) for name, body in defs.items()}
    scoped = {name for name, (named, _) in direct.items() if named.intersection(kinds)}
    while True:
        more = {name for name, (_, refs) in direct.items() if refs & scoped} - scoped
        if not more:
            return scoped
        scoped |= more


def _differing(defs: Mapping[str, Any], scoped: Sequence[str], kinds: Sequence[str]) -> set[int]:
    """The nodes of the ``scoped`` definitions that differ from kernel to kernel, by
    identity: those that refer to a scoped definition or name a kind of ``kinds``, and every
    node above one. A kernel's copy is made of these; it shares the rest with the original."""
    differing: set[int] = set()

    def visit(node: Any) -> bool:
        if isinstance(node, dict):
            below = [visit(value) for value in node.values()]  # every child, not up to the first
            found = any(below) or _ref_name(node) in scoped or node.get("x-names") in kinds
        elif isinstance(node, list):
            found = any([visit(item) for item in node])
        else:
            return False
        if found:
            differing.add(id(node))
        return found

    for name in scoped:
        visit(defs[name])
    return differing


def _for_kernel(node: Any, renamed: Mapping[str, str], own: Mapping[str, Sequence[str]], kernel: str, differing: set[int]) -> Any:
    """A kernel's copy of ``node``: references to the definitions in ``renamed`` go to the
    kernel's copies, and its own names (``own``, by kind) are checked against its enums.
    Nodes that are the same for every kernel (not in ``differing``) are shared, not copied."""
    if id(node) not in differing:
        return node
    if isinstance(node, list):
        return [_for_kernel(item, renamed, own, kernel, differing) for item in node]
    out = {key: _for_kernel(value, renamed, own, kernel, differing) for key, value in node.items()}
    target = _ref_name(node)
    if target is not None and target in renamed:
        out["$ref"] = f"#/$defs/{renamed[target]}"
    kind = node.get("x-names")
    if isinstance(kind, str) and kind in own:
        out["allOf"] = [*out.get("allOf", ()), {"$ref": f"#/$defs/names.{kind}@{kernel}"}]
    return out


def _per_kernel(schema: dict[str, Any], kernels: Sequence[Kernel]) -> dict[str, Any]:
    defs: dict[str, Any] = schema["$defs"]
    scoped = sorted(_scoped_definitions(defs, KERNEL_SCOPED))
    if KERNEL_DEF not in scoped:
        return schema
    differing = _differing(defs, scoped, KERNEL_SCOPED)
    instances: dict[str, Any] = {}
    for kernel in kernels:
        own = {"dfb": [d.name for d in kernel.dfbs]}
        renamed = {name: f"{name}@{kernel.name}" for name in scoped}
        for name in scoped:
            defs[renamed[name]] = _for_kernel(defs[name], renamed, own, kernel.name, differing)
        for kind, values in own.items():
            defs[f"names.{kind}@{kernel.name}"] = {"enum": values}
        instances[kernel.name] = {"$ref": f"#/$defs/{renamed[KERNEL_DEF]}"}
    schema["properties"]["kernels"]["properties"] = instances
    return schema


def editor_schema(kind: SpecKind, project: Project) -> tuple[dict[str, Any], set[str]]:
    """The kind's schema with this tree's names as enums, and the kinds of names it checks."""
    generic = kind.schema()
    names = project_names(project)
    # _specialise builds every container anew, so the shipped schema is never modified.
    schema: dict[str, Any] = _specialise(generic, generic.get("$defs", {}), names, None)
    # Read before the kernels' copies are added: they name the kinds their originals name.
    kinds, referred = _mentions(schema)
    used = sorted({ref.removeprefix("names.") for ref in referred if ref.startswith("names.")})
    if used:
        schema["$defs"] = {**schema.get("$defs", {}), **{f"names.{k}": {"enum": list(names[k])} for k in used}}
    if kind.name == KERNEL_KIND:
        schema = _per_kernel(schema, project.kernels.kernels)
    return schema, kinds


_LINE = 100  # a value whose JSON fits in this many characters is written on one line


def _dumps(value: Any) -> str:
    """JSON as the shipped schemas are written: short values on one line, long ones opened up."""
    return _layout(value, "", {})[1]


def _layout(value: Any, indent: str, done: dict[tuple[int, str], tuple[str, str]]) -> tuple[str, str]:
    """``value`` as one-line JSON (``json.dumps``'s separators) and as laid out at ``indent``.
    Each node's one-line form is built from its children's, so every value is serialised
    once however deep it sits; a node several parents share (the kernels' copies of a
    definition share what is the same for every kernel) is laid out once at an indent
    (``done``, by identity: every node is alive while the schema is written)."""
    if not isinstance(value, dict | list) or not value:
        flat = json_scalar(value)
        return flat, flat
    key = (id(value), indent)
    if key in done:
        return done[key]
    inner = indent + "  "
    if isinstance(value, dict):
        keys = [json_scalar(k) + ": " for k in value]
        children = [_layout(v, inner, done) for v in value.values()]
        flat = "{" + ", ".join([k + f for k, (f, _) in zip(keys, children, strict=True)]) + "}"
        laid = flat
        if len(indent) + len(flat) > _LINE:
            laid = "{\n" + ",\n".join([inner + k + child for k, (_, child) in zip(keys, children, strict=True)]) + "\n" + indent + "}"
    else:
        children = [_layout(v, inner, done) for v in value]
        flat = "[" + ", ".join([f for f, _ in children]) + "]"
        laid = flat
        if len(indent) + len(flat) > _LINE:
            laid = "[\n" + ",\n".join([inner + child for _, child in children]) + "\n" + indent + "]"
    done[key] = flat, laid
    return flat, laid


def _name_sources(project: Project, kinds: set[str]) -> tuple[str, ...]:
    """The specs that declare the names of ``kinds``."""
    # Each group's sources are read only when the schema names a kind of it: an editor
    # schema that names no kernel's buffers reads no kernel, so a kernel edit leaves it be.
    groups: list[tuple[set[str], Callable[[], Iterable[str]]]] = [
        ({"op", "element_type", "primitive", "strategy", "strategy_or_fixed", "full_fp32_kind"}, lambda: project.ops.sources),
        (
            {"target", "architecture", "device_architecture", "target_or_architecture", "runtime_api", "relation_table", "math_fidelity"},
            lambda: project.targets.sources,
        ),
        ({"layout"}, lambda: (layout.file for layout in project.layouts.layouts)),
        (set(KERNEL_SCOPED), lambda: (kernel.source for kernel in project.kernels.kernels)),
    ]
    return tuple(sorted({source for covered, sources in groups if covered & kinds for source in sources()}))


def schema_file(kind: SpecKind, project: Project) -> GeneratedFile:
    """The editor schema of ``kind``, written as ``schemas/<its shipped file name>``."""
    schema, kinds = editor_schema(kind, project)
    return GeneratedFile(
        path=f"schemas/{kind.schema_file}",
        body=_dumps(schema),
        sources=(f"ttlgen/schemas/{kind.schema_file}", *_name_sources(project, kinds)),
    )


def emit(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
    """Every spec kind's editor schema."""
    del plan, ctx
    return [schema_file(kind, project) for kind in spec_kinds()]
