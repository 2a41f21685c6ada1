"""Compare what the two versions can do: ops, targets, their relations, and every shipped
kernel's resolved plan, with the change that caused each kernel's plan to move.

Capabilities carry no version: these changes never fail ``compat``; they are listed for
review. A kernel's plan is its strategies, DST width, sync, unpack-to-DST set and the
runtime compute config they give. For a kernel whose plan differs, each changed input it
depends on (its own spec, the op vocabulary, the semantics of each op it uses, each
relation table and the other facts of its target, its runtime API) is put alone into the
old models and the kernel is resolved again: an input that moves the plan by itself is a
cause. When none does alone, they are reported together.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ttlgen.compat.changes import Area, Cause, Change, Impact, Location, PlanChange
from ttlgen.compat.matching import by_name
from ttlgen.compat.sides import Side
from ttlgen.compat.spec_nodes import align, changed_at
from ttlgen.errors import DiagnosticSink, KeyPath, Mark
from ttlgen.model.kernels import DfbRef, Kernel, Store, walk_statements, walk_values
from ttlgen.model.ops import OpSemantics, OpsModel
from ttlgen.model.targets import (
    ARCHITECTURE_KIND,
    RUNTIME_API_KIND,
    RelationTable,
    Rule,
    Target,
    TargetsModel,
)
from ttlgen.plan import element_types
from ttlgen.plan.resolution import Resolver
from ttlgen.plan.summary import show_value
from ttlgen.provenance.origins import entry_path

# Fields that say where or why, not what: a change of them changes no capability.
_NOT_SEMANTIC = frozenset(
    {"mark", "name_mark", "doc", "summary", "review", "source", "sources", "file", "tolerance"}
)


def semantic(value: object) -> object:
    """``value`` with positions, documentation and review notes left out, for comparison."""
    if isinstance(value, Mark):
        return None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            type(value).__name__,
            tuple(
                (f.name, semantic(getattr(value, f.name)))
                for f in dataclasses.fields(value)
                if f.compare and f.name not in _NOT_SEMANTIC
            ),
        )
    if isinstance(value, tuple | list):
        return tuple(semantic(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), semantic(v)) for k, v in value.items()))
    if isinstance(value, enum.Enum):
        return value.value
    return value


def _differing_fields(old: object, new: object) -> list[str]:
    assert dataclasses.is_dataclass(old) and dataclasses.is_dataclass(new)
    return [
        f.name
        for f in dataclasses.fields(old)
        if f.compare and f.name not in _NOT_SEMANTIC and semantic(getattr(old, f.name)) != semantic(getattr(new, f.name))
    ]


# ------------------------------------------------------------------------------- plans

Facets = dict[str, str]


def facets(strategies: Iterable[tuple[str, str]], dest_width: int, sync: str, plan_json: dict[str, Any], config: dict[str, Any]) -> Facets:
    """A plan as named, printable facets (the plan summary's wording)."""
    unpacked = [int(i) for i in plan_json.get("unpack_to_dest_fp32", [])]
    out = {
        "strategies": ", ".join(f"{op} {s}" for op, s in strategies) or "none",
        "dest width": f"{dest_width} bits",
        "sync": sync,
        "unpack to DST": "DFB " + ", ".join(map(str, unpacked)) if unpacked else "none",
    }
    out.update((name, show_value(value)) for name, value in config.items())
    return out


def _resolved(models: Models, kernel: Kernel) -> Facets | None:
    # The resolver package is generated from the models and cached by its content.
    resolver = Resolver(models.ops, models.targets)
    sink = DiagnosticSink()
    plan = resolver.resolve(kernel, sink)
    if plan is None:
        return None
    strategies = [(op_id, str(s)) for op_id, s in plan.strategies]
    return facets(strategies, int(plan.dest_width), plan.sync.value, plan.to_json(), resolver.compute_config(plan, kernel.math_fidelity))


def _ops_used(kernel: Kernel, ops: OpsModel) -> set[str]:
    used = set()
    copy = element_types.copy_op(ops)
    for stmt in walk_statements(kernel.body):
        if isinstance(stmt, Store):
            if isinstance(stmt.value, DfbRef) and copy is not None:
                used.add(copy.name)
            used.update(expr.op for expr in walk_values(stmt.value))
    return used


# ------------------------------------------------------------------------------ inputs


@dataclass(frozen=True)
class Models:
    ops: OpsModel
    targets: TargetsModel


@dataclass(frozen=True)
class Input:
    """One changed input of a kernel's plan, and how to put the new version of it into old models."""

    what: str
    before: Location | None
    after: Location | None
    apply: Callable[[Models, Kernel], tuple[Models, Kernel]]


def _replace_op(ops: OpsModel, name: str, op: OpSemantics | None) -> OpsModel:
    kept = [o for o in ops.ops if o.name != name]
    if op is not None:
        kept.append(op)
    return dataclasses.replace(ops, ops=tuple(sorted(kept, key=lambda o: o.name)))


def _replace_target(targets: TargetsModel, target: Target) -> TargetsModel:
    kept = [t for t in targets.targets if t.name != target.name] + [target]
    return dataclasses.replace(targets, targets=tuple(sorted(kept, key=lambda t: t.name)))


def _rule(rule: Rule) -> str:
    when = rule.when
    parts = [
        f"{label} {list(values)}"
        for label, values in (
            ("primitive", when.primitives),
            ("element", when.elements),
            ("element_bits", when.element_bits),
            ("route", when.routes),
        )
        if values
    ]
    if when.element_float is not None:
        parts.append(f"element_float {when.element_float}")
    allowed = f"dest_width {list(rule.dest_widths)}"
    if rule.unpack_modes:
        allowed += f", unpack {list(rule.unpack_modes)}"
    return (f"when {', '.join(parts)}: " if parts else "otherwise: ") + f"allow {allowed}"


def _rules_of(rule: Rule) -> Mark:
    """The list of rules ``rule`` is in, by path: found on the other side too (one table's
    rules are in one file)."""
    return Mark(rule.mark.file, 0, 0, rule.mark.path[:-1])


def relation_change(old: RelationTable | None, new: RelationTable | None) -> tuple[str, Mark | None, Mark | None]:
    """What differs between two versions of a relation table, and where on each side (the
    first differing rule; a rule only one side has is located on the other side at its
    table). Rules are aligned by content, so a rule removed is that rule removed, not every
    rule after it changed; each rule is numbered on the side it is on."""
    if old is None or new is None:
        table = new or old
        assert table is not None
        return ("added" if old is None else "removed"), (old.mark if old else None), (new.mark if new else None)
    if old.origin != new.origin:
        return f"table {old.origin} -> {new.origin}", old.mark, new.mark
    before, after = [semantic(r) for r in old.rules], [semantic(r) for r in new.rules]
    found: list[tuple[str, Mark, Mark]] = []
    for i, j in align(before, after):
        if i is not None and j is not None:
            o, n = old.rules[i], new.rules[j]
            number = f"rule {i + 1}" if i == j else f"rule {i + 1} (now {j + 1})"
            found.append((f"{number}: {_rule(o)} -> {_rule(n)}", o.mark, n.mark))
        elif i is not None:
            found.append((f"rule {i + 1} removed: {_rule(old.rules[i])}", old.rules[i].mark, _rules_of(old.rules[i])))
        elif j is not None:
            found.append((f"rule {j + 1} added: {_rule(new.rules[j])}", _rules_of(new.rules[j]), new.rules[j].mark))
    assert found, "two tables that differ differ in a rule"
    return "; ".join(what for what, _, _ in found), found[0][1], found[0][2]


class Capabilities:
    def __init__(self, old: Side, new: Side) -> None:
        self.old, self.new = old, new
        self.old_models = Models(old.project.ops, old.project.targets)
        self.new_models = Models(new.project.ops, new.project.targets)
        self.changes: list[Change] = []

    def _add(self, kind: str, subject: str, message: str, before: Location | None, after: Location | None, plan: PlanChange | None = None) -> None:
        self.changes.append(Change(Area.CAPABILITIES, Impact.REVIEW, kind, subject, message, before, after, plan=plan))

    def _loc(self, side: Side, mark: Mark | None) -> Location | None:
        return side.node(mark) if mark is not None else None

    def _changed(
        self, nodes: list[tuple[str, KeyPath]], old_mark: Mark | None, new_mark: Mark | None, skip: list[tuple[str, KeyPath]] | None = None
    ) -> tuple[Location | None, Location | None]:
        """Where the edit under ``nodes`` is on each side; the objects' own nodes when the
        documents do not show it (a change that is not the spec's text)."""
        found = changed_at(self.old, self.new, nodes, skip or [])
        return found if found is not None else (self._loc(self.old, old_mark), self._loc(self.new, new_mark))

    def _entry(self, mark: Mark) -> list[tuple[str, KeyPath]]:
        """The spec entry a model object is declared in (an op's family, a kernel)."""
        return [(mark.file, entry_path(mark.path))]

    def _target_nodes(self, t: Target) -> tuple[list[tuple[str, KeyPath]], list[tuple[str, KeyPath]]]:
        """The nodes a target's facts other than its relation tables come from (its own
        spec, its architecture's, its runtime API's entry), and the relations to skip."""
        nodes: list[tuple[str, KeyPath]] = [(t.source, ())]
        for document in self.new.documents:
            if document.kind == ARCHITECTURE_KIND and document.data.get("name") == t.architecture and document.source != t.source:
                nodes.append((document.source, ()))
            elif document.kind == RUNTIME_API_KIND and t.runtime_api in document.data.get("apis", {}):
                nodes.append((document.source, ("apis", t.runtime_api)))
        return nodes, [(t.source, ("relations",))]

    def _api_nodes(self, name: str) -> list[tuple[str, KeyPath]]:
        return [(d.source, ("apis", name)) for d in self.new.documents if d.kind == RUNTIME_API_KIND and name in d.data.get("apis", {})]

    def _enum_nodes(self) -> list[tuple[str, KeyPath]]:
        return [(d.source, ("enums",)) for d in self.new.documents if d.kind == RUNTIME_API_KIND]

    # -- what changed, whatever the kernels ---------------------------------------------
    def run(self) -> list[Change]:
        self.ops()
        self.targets()
        self.kernels()
        return self.changes

    def ops(self) -> None:
        old_vocabulary, new_vocabulary = self.old_models.ops.vocabulary, self.new_models.ops.vocabulary
        if semantic(old_vocabulary) != semantic(new_vocabulary):
            before, after = self._vocabulary_at()
            self._add("vocabulary", "the op vocabulary", f"changed: {', '.join(_differing_fields(old_vocabulary, new_vocabulary))}", before, after)
        for name, o, n in by_name(self.old_models.ops.ops, self.new_models.ops.ops, lambda op: op.name):
            if o is None and n is not None:
                self._add("op-added", f"op {name!r}", f"new op ({n.family})", None, self._loc(self.new, n.mark))
            elif n is None and o is not None:
                self._add("op-removed", f"op {name!r}", "removed", self._loc(self.old, o.mark), None)
            elif o is not None and n is not None and semantic(o) != semantic(n):
                before, after = self._changed(self._entry(n.mark), o.mark, n.mark)
                self._add("op-semantics", f"op {name!r}", f"semantics changed: {', '.join(_differing_fields(o, n))}", before, after)

    def _vocabulary_at(self) -> tuple[Location | None, Location | None]:
        old_vocabulary, new_vocabulary = self.old_models.ops.vocabulary, self.new_models.ops.vocabulary
        found = changed_at(self.old, self.new, [(new_vocabulary.source, ())])
        return found if found is not None else (self.old.at(old_vocabulary.source, ()), self.new.at(new_vocabulary.source, ()))

    def targets(self) -> None:
        # A shared table, or an architecture's or API's fact, is one spec change whichever
        # targets it reaches: one finding for it, naming them.
        relations: dict[tuple[str, str, str, Location | None, Location | None], list[str]] = {}
        facts_of: dict[tuple[str, Location | None, Location | None], list[str]] = {}
        for name, o, n in by_name(self.old_models.targets.targets, self.new_models.targets.targets, lambda t: t.name):
            if o is None and n is not None:
                self._add("target-added", f"target {name!r}", f"new target ({n.architecture}, {n.runtime_api})", None, self._loc(self.new, n.mark))
            elif n is None and o is not None:
                self._add("target-removed", f"target {name!r}", "removed", self._loc(self.old, o.mark), None)
            elif o is not None and n is not None:
                for facet in ("dest_width", "dfb_unpack"):
                    before, after = getattr(o, facet), getattr(n, facet)
                    if semantic(before) != semantic(after):
                        what, bm, am = relation_change(before, after)
                        table = (after or before).origin if (after or before) is not None else name
                        key = (facet, table, what, self._loc(self.old, bm), self._loc(self.new, am))
                        relations.setdefault(key, []).append(name)
                facts = _differing_fields(dataclasses.replace(o, dest_width=None, dfb_unpack=None), dataclasses.replace(n, dest_width=None, dfb_unpack=None))
                if facts:
                    nodes, skip = self._target_nodes(n)
                    before_at, after_at = self._changed(nodes, o.mark, n.mark, skip)
                    facts_of.setdefault((", ".join(facts), before_at, after_at), []).append(name)
        for (facts_changed, before_at, after_at), names in facts_of.items():
            subject = f"target{'s' if len(names) > 1 else ''} {', '.join(repr(n) for n in names)}"
            self._add("target-facts", subject, f"changed: {facts_changed}", before_at, after_at)
        for (facet, table, what, before_at, after_at), users in relations.items():
            if table == users[0] and len(users) == 1:
                subject = f"relation {facet} of target {table!r}"
            else:
                subject = f"relation table {table} ({facet}) of target{'s' if len(users) > 1 else ''} {', '.join(users)}"
            self._add("relation", subject, what, before_at, after_at)
        for name, oa, na in by_name(self.old_models.targets.runtime_apis, self.new_models.targets.runtime_apis, lambda a: a.name):
            if oa is None or na is None:
                word = "new runtime API" if oa is None else "removed"
                self._add(
                    "runtime-api", f"runtime API {name!r}", word,
                    self.old.at(oa.source, ("apis", name)) if oa else None, self.new.at(na.source, ("apis", name)) if na else None,
                )
            elif semantic(oa) != semantic(na):
                before_at, after_at = self._changed(self._api_nodes(name), None, None)
                self._add("runtime-api", f"runtime API {name!r}", f"changed: {', '.join(_differing_fields(oa, na))}", before_at, after_at)

    # -- kernels ------------------------------------------------------------------------
    def kernels(self) -> None:
        for name, o, n in by_name(self.old.plan.kernels, self.new.plan.kernels, lambda k: k.kernel.name):
            if o is None and n is not None:
                self._add("kernel-added", f"kernel {name!r}", f"new kernel (target {n.kernel.target})", None, self._loc(self.new, n.kernel.mark))
                continue
            if n is None and o is not None:
                self._add("kernel-removed", f"kernel {name!r}", "removed", self._loc(self.old, o.kernel.mark), None)
                continue
            assert o is not None and n is not None
            before = facets(o.strategies, o.dest_width, o.sync, o.plan_json, o.compute_config)
            after = facets(n.strategies, n.dest_width, n.sync, n.plan_json, n.compute_config)
            moved = tuple((f, before.get(f, "-"), after.get(f, "-")) for f in dict.fromkeys([*before, *after]) if before.get(f) != after.get(f))
            if not moved:
                continue
            causes = self.causes(o.kernel, n.kernel, before)
            shown = "; ".join(f"{f} {b} -> {a}" for f, b, a in moved)
            self._add(
                "kernel-plan", f"kernel {name!r}", f"plan changed: {shown}",
                self._loc(self.old, o.kernel.mark), self._loc(self.new, n.kernel.mark), PlanChange(name, moved, causes),
            )

    def inputs(self, old: Kernel, new: Kernel) -> list[Input]:
        """The changed inputs ``new``'s plan depends on."""
        found: list[Input] = []
        if semantic(old) != semantic(new):

            def own_spec(m: Models, k: Kernel) -> tuple[Models, Kernel]:
                return m, new

            found.append(Input(f"kernel {new.name!r}: {', '.join(_differing_fields(old, new))} changed", *self._changed(self._entry(new.mark), old.mark, new.mark), own_spec))
        om, nm = self.old_models, self.new_models
        if semantic(om.ops.vocabulary) != semantic(nm.ops.vocabulary):
            vocabulary = nm.ops.vocabulary
            found.append(
                Input(
                    "the op vocabulary changed", *self._vocabulary_at(),
                    lambda m, k: (dataclasses.replace(m, ops=dataclasses.replace(m.ops, vocabulary=vocabulary)), k),
                )
            )
        old_ops = {o.name: o for o in om.ops.ops}
        new_ops = {o.name: o for o in nm.ops.ops}
        for name in sorted(_ops_used(old, om.ops) | _ops_used(new, nm.ops)):
            o, n = old_ops.get(name), new_ops.get(name)
            if semantic(o) == semantic(n):
                continue
            what = f"op {name!r}: " + (
                "added" if o is None else "removed" if n is None else f"{', '.join(_differing_fields(o, n))} changed"
            )

            def one_op(m: Models, k: Kernel, name: str = name, n: OpSemantics | None = n) -> tuple[Models, Kernel]:
                return dataclasses.replace(m, ops=_replace_op(m.ops, name, n)), k

            if o is not None and n is not None:
                before_at, after_at = self._changed(self._entry(n.mark), o.mark, n.mark)
            else:
                before_at, after_at = self._loc(self.old, o.mark if o else None), self._loc(self.new, n.mark if n else None)
            found.append(Input(what, before_at, after_at, one_op))
        found += self.target_inputs(new.target)
        return found

    def target_inputs(self, name: str) -> list[Input]:
        om, nm = self.old_models, self.new_models
        o = next((t for t in om.targets.targets if t.name == name), None)
        n = next((t for t in nm.targets.targets if t.name == name), None)
        if o is None or n is None:
            return []  # a new or removed target: the kernel's own change names it
        found: list[Input] = []
        for facet in ("dest_width", "dfb_unpack"):
            before, after = getattr(o, facet), getattr(n, facet)
            if semantic(before) == semantic(after):
                continue
            what, bm, am = relation_change(before, after)
            origin = (after or before).origin if (after or before) is not None else ""
            shared = f" ({origin})" if origin and origin != name else ""

            def apply(m: Models, k: Kernel, facet: str = facet, after: RelationTable | None = after) -> tuple[Models, Kernel]:
                current = next(t for t in m.targets.targets if t.name == name)
                if facet == "dest_width":
                    mixed = dataclasses.replace(current, dest_width=after)
                else:
                    mixed = dataclasses.replace(current, dfb_unpack=after)
                return dataclasses.replace(m, targets=_replace_target(m.targets, mixed)), k

            found.append(Input(f"relation {facet} of target {name!r}{shared}: {what}", self._loc(self.old, bm), self._loc(self.new, am), apply))
        facts = _differing_fields(dataclasses.replace(o, dest_width=None, dfb_unpack=None), dataclasses.replace(n, dest_width=None, dfb_unpack=None))
        if facts:

            def apply_facts(m: Models, k: Kernel) -> tuple[Models, Kernel]:
                current = next(t for t in m.targets.targets if t.name == name)
                mixed = dataclasses.replace(n, dest_width=current.dest_width, dfb_unpack=current.dfb_unpack)
                return dataclasses.replace(m, targets=_replace_target(m.targets, mixed)), k

            nodes, skip = self._target_nodes(n)
            found.append(Input(f"target {name!r}: {', '.join(facts)} changed", *self._changed(nodes, o.mark, n.mark, skip), apply_facts))
        oa = next((a for a in om.targets.runtime_apis if a.name == n.runtime_api), None)
        na = next((a for a in nm.targets.runtime_apis if a.name == n.runtime_api), None)
        if oa is not None and na is not None and semantic(oa) != semantic(na):
            apis = tuple(na if a.name == na.name else a for a in om.targets.runtime_apis)
            found.append(
                Input(
                    f"runtime API {na.name!r}: {', '.join(_differing_fields(oa, na))} changed", *self._changed(self._api_nodes(na.name), None, None),
                    lambda m, k: (dataclasses.replace(m, targets=dataclasses.replace(m.targets, runtime_apis=apis)), k),
                )
            )
        if semantic(om.targets.runtime_enums) != semantic(nm.targets.runtime_enums):
            enums = nm.targets.runtime_enums
            found.append(
                Input(
                    "the runtime enumerations changed", *self._changed(self._enum_nodes(), None, None),
                    lambda m, k: (dataclasses.replace(m, targets=dataclasses.replace(m.targets, runtime_enums=enums)), k),
                )
            )
        return found

    def causes(self, old: Kernel, new: Kernel, before: Facets) -> tuple[Cause, ...]:
        inputs = self.inputs(old, new)
        alone = []
        for item in inputs:
            models, kernel = item.apply(self.old_models, old)
            try:
                moved = _resolved(models, kernel) != before
            except Exception:  # an input that does not fit the old models alone decides nothing alone
                moved = False
            if moved:
                alone.append(Cause(item.what, item.before, item.after))
        if alone:
            return tuple(alone)
        return tuple(Cause(item.what, item.before, item.after, joint=True) for item in inputs)


def compare_capabilities(old: Side, new: Side) -> list[Change]:
    return Capabilities(old, new).run()
