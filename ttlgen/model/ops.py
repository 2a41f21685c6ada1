"""Tile-operation model: the shared op vocabulary and every op's execution semantics.

Built from ``ttlgen.op_vocabulary/v1`` (one file) and ``ttlgen.ops/v1`` documents. Facts
here are target-independent; target support is in :mod:`ttlgen.model.targets`.
"""

from __future__ import annotations

import functools
import itertools
import string
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from ttlgen.errors import DiagnosticSink, Entity, Mark, did_you_mean
from ttlgen.model import ttlang_cpp

# Operand routes and strategy legality conditions are the resolver's fixed vocabulary.
from ttlgen.resolver.semantics import LegalityCondition as LegalityCondition
from ttlgen.resolver.semantics import Route as Route
from ttlgen.spec.document import SpecDocument

VOCABULARY_KIND = "ttlgen.op_vocabulary"
OPS_KIND = "ttlgen.ops"
# The spec kinds whose names (element types, primitives, strategies, full-fp32 kinds) come
# from the vocabulary: without it, each of their names would be reported unknown.
VOCABULARY_READERS = (
    OPS_KIND, "ttlgen.op_spelling", "ttlgen.kernel", "ttlgen.relations", "ttlgen.runtime_api",
    "ttlgen.architecture", "ttlgen.target",
)

# What later checks rely on (errors.DiagnosticSink): a missing vocabulary makes every check
# of a name against it meaningless; a family whose strategies or routes are wrong makes
# every check of its ops' operands and strategies meaningless.
VOCABULARY = Entity("op vocabulary")

# The route of an operand read from its dataflow buffer when a kernel reads it from one,
# and in DST when a tile op computes it.
BY_PRODUCER = "by_producer"


def op_entity(name: str) -> Entity:
    return Entity("op", name)


@dataclass(frozen=True)
class ElementType:
    """An element type of the vocabulary and its width."""

    name: str
    bits: int
    is_float: bool
    mark: Mark


@dataclass(frozen=True)
class StrategyKind:
    """An execution strategy of the vocabulary (e.g. FPU, SFPU), in resolver order."""

    name: str
    order: int
    gated_by_fpu_binary_policy: bool
    mark: Mark


@dataclass(frozen=True)
class FullFp32Kind:
    """An accumulation category whose full-fp32 lowering a target may support."""

    name: str
    preference: str
    mark: Mark


@dataclass(frozen=True)
class DstRegister:
    """The DST register: its physical tiles, halved under each listed sync mode and each
    listed destination width (the same for every architecture)."""

    physical_tiles: int
    halved_for_sync: tuple[str, ...]
    halved_for_width: tuple[int, ...]
    mark: Mark


@dataclass(frozen=True)
class ResolverGeneration:
    """A generation of TT-Lang's kernel-configuration resolver and its switches."""

    name: str
    summary: str
    auto_sync: str  # double_buffered | by_capacity
    policy_values: str  # coerced | typed
    dfb_range_target: str | None  # format of the capacity description ({capacity}, {target})
    dfb_range_no_target: str | None
    mark: Mark


@dataclass(frozen=True)
class Vocabulary:
    """The names every op and target spec draws from."""

    element_types: tuple[ElementType, ...]
    primitives: tuple[str, ...]
    strategies: tuple[StrategyKind, ...]  # resolver order
    full_fp32_kinds: tuple[FullFp32Kind, ...]
    source: str
    cpp: ttlang_cpp.TtlangCpp | None = None  # TT-Lang's C++ spelling; None: no C++ is generated
    dst: DstRegister | None = None  # None only without a vocabulary
    generations: tuple[ResolverGeneration, ...] = ()  # sorted by name
    default_generation: str = ""  # followed by a target that names none

    def generation(self, name: str) -> ResolverGeneration | None:
        return next((g for g in self.generations if g.name == name), None)

    def element(self, name: str) -> ElementType | None:
        return next((e for e in self.element_types if e.name == name), None)


# How an ops spec declares an attribute whose value is a number (TT-Lang's F32Attr).
FLOAT_ATTRIBUTE = "float"


@dataclass(frozen=True)
class Selection:
    """A fixed name (``attribute`` is None) or a name selected by an op attribute value."""

    attribute: str | None
    fixed: str | None
    values: tuple[tuple[str, str], ...]  # (attribute value, selected name), in spec order

    @property
    def names(self) -> tuple[str, ...]:
        return (self.fixed,) if self.fixed is not None else tuple(v for _, v in self.values)


def selecting_attributes(*selections: Selection | None) -> set[str]:
    """The op attributes whose values select a name in these selections."""
    return {s.attribute for s in selections if s is not None and s.attribute}


@dataclass(frozen=True)
class Operand:
    """An operand of an op family."""

    name: str
    optional: bool
    initialized_by_op: bool
    # Routed by what produces it (``route: by_producer``): from its dataflow buffer when the
    # kernel reads it from one, in DST when a tile op computes it (TT-Lang's tile_accumulate
    # contribution). Its entry in ``Strategy.routes`` is DST, the route of a computed value.
    by_producer: bool = False


@dataclass(frozen=True)
class Strategy:
    """One way to execute an op: operand routes, legality conditions, accumulation."""

    name: str | None  # None: fixed semantics
    legal_when: tuple[LegalityCondition, ...]
    routes: tuple[Route, ...]  # one per operand, in operand order
    accumulates: bool


class BlockShape(Enum):
    """How the block of tiles an op produces follows from its operands' blocks."""

    ELEMENTWISE = "elementwise"  # operands of one shape (a 1x1 block broadcasts); the result has it
    CONTRACTION = "contraction"  # lhs M x K by rhs K x N gives M x N


@dataclass(frozen=True)
class OpSemantics:
    """Execution semantics of one op name (a family instance)."""

    name: str
    family: str
    primitive: Selection
    operands: tuple[Operand, ...]
    result_in_dst: bool
    has_result: bool
    full_fp32: Selection | None
    # Fixed semantics: exactly one entry whose name is None. With strategies: the op's
    # strategies in resolver order.
    strategies: tuple[Strategy, ...]
    block_shape: BlockShape
    source: str
    mark: Mark
    # Attributes that select nothing here (a reduce's pool type), with the values each takes.
    plain_attributes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # The integer attribute giving the DST slots the op holds at once (None: one slot).
    dst_slots_attribute: str | None = None
    # The attribute whose value is the result's element type (None: the operands' type).
    result_element_attribute: str | None = None
    # The element types the op computes on (its operands and result); empty: any.
    elements: tuple[str, ...] = ()
    # Attributes whose value is a number (``attributes: {value: float}``, TT-Lang's F32Attr):
    # spelled as an fp32 literal, and named by the op's math.
    float_attributes: tuple[str, ...] = ()

    @property
    def fixed(self) -> bool:
        return self.strategies[0].name is None if self.strategies else True

    @property
    def has_alternatives(self) -> bool:
        return len(self.strategies) > 1

    @property
    def attributes(self) -> tuple[str, ...]:
        names = selecting_attributes(self.primitive, self.full_fp32) | {name for name, _ in self.plain_attributes}
        names.update(self.float_attributes)
        for attribute in (self.dst_slots_attribute, self.result_element_attribute):
            if attribute is not None:
                names.add(attribute)
        return tuple(sorted(names))

    @property
    def by_producer(self) -> int | None:
        """The number of the operand routed by its producer, if the op has one."""
        return next((i for i, o in enumerate(self.operands) if o.by_producer), None)

    @property
    def spelling_keys(self) -> tuple[str, ...]:
        """How the spelling spec keys the op's calls: one per strategy (``fixed`` for fixed
        semantics), or for an operand routed by its producer one per route it can take."""
        if self.by_producer is not None:
            return (Route.DFB.value, Route.DST.value)
        return tuple(s.name or "fixed" for s in self.strategies)

    @functools.cached_property
    def tile_operands(self) -> tuple[int, ...]:
        """The number of each operand some strategy routes: those a kernel passes a value
        for (asked at every use of the op in every kernel)."""
        return tuple(i for i in range(len(self.operands)) if any(s.routes[i] is not Route.NONE for s in self.strategies))

    def attribute_values(self, name: str) -> tuple[str, ...] | None:
        """The values a plain attribute takes (None: not a plain attribute)."""
        return next((values for n, values in self.plain_attributes if n == name), None)


@dataclass(frozen=True)
class OpsModel:
    """The vocabulary and every op of the spec tree."""

    vocabulary: Vocabulary
    ops: tuple[OpSemantics, ...]  # sorted by name

    @functools.cached_property
    def sources(self) -> tuple[str, ...]:
        # Read once: every lowered kernel lists them among its sources.
        return tuple(sorted({self.vocabulary.source, *(op.source for op in self.ops)}))

    @functools.cached_property
    def by_name(self) -> dict[str, OpSemantics]:
        """Every op by its name (each kernel's builder looks its ops up)."""
        return {op.name: op for op in self.ops}


_EMPTY_VOCABULARY = Vocabulary((), (), (), (), "")


def _vocabulary(docs: Sequence[SpecDocument], sink: DiagnosticSink) -> Vocabulary:
    if not docs:
        return _EMPTY_VOCABULARY
    for doc in docs[1:]:
        sink.error(doc.mark(("spec",)), f"a second {VOCABULARY_KIND} file; the vocabulary is declared once (first: {docs[0].display})")
    doc = docs[0]
    data = doc.data
    elements = tuple(
        ElementType(name, body["bits"], body["float"], doc.key_mark(("element_types", name)))
        for name, body in sorted(data["element_types"].items())
    )
    strategies = []
    seen: set[str] = set()
    for index, body in enumerate(data["strategies"]):
        if body["name"] in seen:
            sink.error(doc.mark(("strategies", index, "name")), f"duplicate strategy {body['name']!r}")
        seen.add(body["name"])
        strategies.append(StrategyKind(body["name"], index, body["gated_by_fpu_binary_policy"], doc.mark(("strategies", index))))
    kinds = tuple(
        FullFp32Kind(name, body["preference"], doc.key_mark(("full_fp32_kinds", name)))
        for name, body in sorted(data["full_fp32_kinds"].items())
    )
    primitives = tuple(data["primitives"])
    cpp = None
    if ttlang_cpp.SECTION in data:
        cpp = ttlang_cpp.build(doc, [e.name for e in elements], primitives, [k.name for k in kinds], sink)
    return Vocabulary(elements, primitives, tuple(strategies), kinds, doc.source, cpp, _dst(doc), *_generations(doc, sink))


def _dst(doc: SpecDocument) -> DstRegister:
    raw = doc.data["dst"]
    halved = raw["halved_for"]
    return DstRegister(raw["physical_tiles"], tuple(halved["sync"]), tuple(halved["dest_width"]), doc.key_mark(("dst",)))


# The placeholders a capacity description may use. targets.py formats it with the
# architecture's capacity (an int) and the target's display name (a str).
_RANGE_FIELDS = {"target": ("capacity", "target"), "no_target": ("capacity",)}


def _generations(doc: SpecDocument, sink: DiagnosticSink) -> tuple[tuple[ResolverGeneration, ...], str]:
    out = []
    for name, raw in sorted(doc.data["resolver_generations"].items()):
        texts: dict[str, str | None] = {"target": None, "no_target": None}
        if "dfb_range" in raw:
            for key, allowed in _RANGE_FIELDS.items():
                text = raw["dfb_range"][key]
                problem = _range_text_problem(text, allowed)
                if problem is not None:
                    sink.error(doc.mark(("resolver_generations", name, "dfb_range", key)), problem)
                    continue
                texts[key] = text
        out.append(
            ResolverGeneration(
                name, " ".join(raw["summary"].split()), raw["auto_sync"], raw["policy_values"],
                texts["target"], texts["no_target"], doc.key_mark(("resolver_generations", name)),
            )
        )
    default = doc.data["default_resolver_generation"]
    if default not in doc.data["resolver_generations"]:
        sink.error(doc.mark(("default_resolver_generation",)), unknown_name("resolver generation", default, [g.name for g in out]))
    return tuple(out), default


def _range_text_problem(text: str, allowed: Sequence[str]) -> str | None:
    """What is wrong with a capacity description's placeholders, if anything.

    Every placeholder is a bare name of ``allowed``: an attribute, index, conversion or
    format spec would reach a value only when the text is formatted (formatting with
    empty strings let ``{target.upper}`` through, to print a bound method), and the
    sentence needs none of them (the capacity prints as an integer already)."""
    valid = " and ".join("{" + field + "}" for field in allowed)
    try:
        fields = [
            (field, spec, conversion)
            for _, field, spec, conversion in string.Formatter().parse(text)
            if field is not None
        ]
    except ValueError as exc:  # an unmatched brace
        return f"a capacity description may use only the placeholders {valid} ({exc}; write {{{{ or }}}} for a literal brace)"
    for field, spec, conversion in fields:
        if field in allowed and not spec and conversion is None:
            continue
        placeholder = "{" + field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        name = field.partition(".")[0].partition("[")[0]  # what an attribute or index is of
        if name in allowed:
            return f"{placeholder} in a capacity description: write it bare, {{{name}}}; the placeholders are {valid}"
        return f"{placeholder} in a capacity description is no placeholder of it; the placeholders are {valid}, each bare{did_you_mean(field, allowed)}"
    return None


def unknown_name(what: str, name: str, declared: Sequence[str]) -> str:
    """``unknown primitive 'X'; declared: A, B (did you mean 'A'?)``."""
    return f"unknown {what} {name!r}; declared: {', '.join(declared) or 'none'}{did_you_mean(name, declared)}"


def _selection(
    raw: object, doc: SpecDocument, path: tuple[str | int, ...], allowed: Sequence[str], what: str, sink: DiagnosticSink
) -> Selection:
    if isinstance(raw, str):
        if raw not in allowed:
            sink.error(doc.mark(path), unknown_name(what, raw, allowed), after=[VOCABULARY])
        return Selection(None, raw, ())
    assert isinstance(raw, dict)
    values = []
    for key, name in raw["values"].items():
        if name not in allowed:
            sink.error(doc.mark((*path, "values", key)), unknown_name(what, name, allowed), after=[VOCABULARY])
        values.append((key, name))
    return Selection(raw["by_attribute"], None, tuple(values))


def _family(
    doc: SpecDocument, family: str, body: dict[str, object], vocab: Vocabulary, sink: DiagnosticSink
) -> list[OpSemantics]:
    base = ("families", family)
    raw_names = body["names"]
    assert isinstance(raw_names, list)
    # An error in the family's operands, strategies or routes breaks each of its ops.
    ops_of_family = [op_entity(name) for name in raw_names]
    primitive = _selection(body["primitive"], doc, (*base, "primitive"), vocab.primitives, "primitive", sink)
    kinds = [k.name for k in vocab.full_fp32_kinds]
    full_fp32 = None
    if "full_fp32" in body:
        full_fp32 = _selection(body["full_fp32"], doc, (*base, "full_fp32"), kinds, "full-fp32 kind", sink)
        if primitive.attribute and full_fp32.attribute and primitive.attribute != full_fp32.attribute:
            sink.error(doc.mark((*base, "full_fp32", "by_attribute")), "primitive and full_fp32 must be selected by the same attribute")
    raw_operands = body["operands"]
    assert isinstance(raw_operands, list)
    operands: list[Operand] = []
    names: dict[str, int] = {}
    for index, raw in enumerate(raw_operands):
        if raw["name"] in names:
            sink.error(doc.mark((*base, "operands", index, "name")), f"duplicate operand name {raw['name']!r}", breaks=ops_of_family)
        names[raw["name"]] = index
        operands.append(
            Operand(raw["name"], bool(raw.get("optional", False)), bool(raw.get("initialized_by_op", False)), raw.get("route") == BY_PRODUCER)
        )
    strategies: list[Strategy] = []
    raw_strategies = body.get("strategies")
    if raw_strategies is None:
        routes = []
        for index, raw in enumerate(raw_operands):
            if "route" not in raw:
                sink.error(doc.mark((*base, "operands", index)), f"operand {raw['name']!r} needs a route: the family has fixed semantics (no strategies)", breaks=ops_of_family)
            route = raw.get("route", "none")
            routes.append(Route.DST if route == BY_PRODUCER else Route(route))
        strategies.append(Strategy(None, (), tuple(routes), bool(body.get("accumulates", False))))
        producer_routed = [i for i, o in enumerate(operands) if o.by_producer]
        for index in producer_routed[1:]:
            sink.error(doc.mark((*base, "operands", index, "route")), "only one operand of an op may be routed by its producer (its spellings are keyed by that operand's route)", breaks=ops_of_family)
    else:
        assert isinstance(raw_strategies, list)
        if "accumulates" in body:
            sink.error(doc.key_mark((*base, "accumulates")), "a family with strategies states accumulates per strategy")
        for index, raw in enumerate(raw_operands):
            if "route" in raw:
                sink.error(doc.key_mark((*base, "operands", index, "route")), "a family with strategies gives operand routes per strategy")
        order = {k.name: k.order for k in vocab.strategies}
        seen: set[str] = set()
        for sindex, raw in enumerate(raw_strategies):
            spath = (*base, "strategies", sindex)
            name = raw["strategy"]
            if name not in order:
                sink.error(doc.mark((*spath, "strategy")), unknown_name("strategy", name, list(order)), after=[VOCABULARY], breaks=ops_of_family)
            if name in seen:
                sink.error(doc.mark((*spath, "strategy")), f"duplicate strategy {name!r}", breaks=ops_of_family)
            seen.add(name)
            routes = []
            # A misspelt operand name is one error: the route it leaves missing follows from it.
            misspelt = Entity("routes", f"{doc.display}:{family}:{sindex}")
            for oname in raw["routes"]:
                if oname not in names:
                    sink.error(
                        doc.key_mark((*spath, "routes", oname)),
                        f"unknown operand {oname!r}; operands: {', '.join(names) or 'none'}{did_you_mean(oname, names)}",
                        breaks=[misspelt, *ops_of_family],
                    )
            for operand in operands:
                if operand.name not in raw["routes"]:
                    sink.error(doc.mark((*spath, "routes")), f"no route for operand {operand.name!r}", after=[misspelt], breaks=ops_of_family)
                routes.append(Route(raw["routes"].get(operand.name, "none")))
            conditions = tuple(LegalityCondition(c) for c in raw.get("legal_when", ()))
            strategies.append(Strategy(name, conditions, tuple(routes), raw["accumulates"]))
        strategies.sort(key=lambda s: order.get(s.name or "", len(order)))
    for index, operand in enumerate(operands):
        if operand.initialized_by_op and any(s.routes[index] is not Route.DST for s in strategies):
            sink.error(doc.mark((*base, "operands", index)), f"operand {operand.name!r} is initialized by the op but is not routed to DST")
    # Kernel descriptions list only tile-data operands; keep them first so operand
    # numbers agree between the spec and a kernel.
    data_flags = [any(s.routes[i] is not Route.NONE for s in strategies) for i in range(len(operands))]
    if any(not a and b for a, b in itertools.pairwise(data_flags)):
        sink.error(doc.mark((*base, "operands")), "operands without tile data (route none in every strategy) must come after all tile-data operands", breaks=ops_of_family)
    raw_attributes = body.get("attributes", {})
    assert isinstance(raw_attributes, dict)
    selecting = selecting_attributes(primitive, full_fp32)
    for name in raw_attributes:
        if name in selecting:
            sink.error(doc.key_mark((*base, "attributes", name)), f"attribute {name!r} already selects the family's primitive or full-fp32 kind; its values are listed there")
    plain = tuple((name, tuple(values)) for name, values in sorted(raw_attributes.items()) if name not in selecting and isinstance(values, list))
    floats = tuple(sorted(name for name, values in raw_attributes.items() if name not in selecting and values == FLOAT_ATTRIBUTE))
    dst_slots = body.get("dst_slots")
    slots_attribute = dst_slots["by_attribute"] if isinstance(dst_slots, dict) else None
    if slots_attribute is not None and (slots_attribute in selecting or slots_attribute in raw_attributes):
        sink.error(
            doc.mark((*base, "dst_slots", "by_attribute")),
            f"attribute {slots_attribute!r} already selects a name or takes listed values; the DST slot count is an integer attribute of its own",
        )
    result_element = body.get("result_element")
    result_attribute = result_element["by_attribute"] if isinstance(result_element, dict) else None
    if result_attribute is not None:
        if result_attribute in selecting or result_attribute in raw_attributes or result_attribute == slots_attribute:
            sink.error(
                doc.mark((*base, "result_element", "by_attribute")),
                f"attribute {result_attribute!r} already selects a name, takes listed values or counts DST slots; the result's element type is an attribute of its own",
            )
        if body["result"] != "dst":
            sink.error(doc.key_mark((*base, "result_element")), "an op without a result has no result element type")
    elements = body.get("elements", [])
    assert isinstance(elements, list)
    declared = [e.name for e in vocab.element_types]
    for index, element in enumerate(elements):
        if element not in declared:
            sink.error(doc.mark((*base, "elements", index)), unknown_name("element type", element, declared), after=[VOCABULARY])
    result = body["result"]
    return [
        OpSemantics(
            name=name,
            family=family,
            primitive=primitive,
            operands=tuple(operands),
            result_in_dst=result == "dst",
            has_result=result != "none",
            full_fp32=full_fp32,
            strategies=tuple(strategies),
            block_shape=BlockShape(body.get("block_shape", BlockShape.ELEMENTWISE.value)),
            source=doc.source,
            mark=doc.mark((*base, "names", index)),
            plain_attributes=plain,
            dst_slots_attribute=slots_attribute,
            result_element_attribute=result_attribute,
            elements=tuple(elements),
            float_attributes=floats,
        )
        for index, name in enumerate(raw_names)
    ]


def build(documents: Sequence[SpecDocument], sink: DiagnosticSink) -> OpsModel:
    vocab_docs = [d for d in documents if d.kind == VOCABULARY_KIND]
    op_docs = [d for d in documents if d.kind == OPS_KIND]
    vocab = _vocabulary(vocab_docs, sink)
    readers = op_docs or [d for d in documents if d.kind in VOCABULARY_READERS]
    if readers and not vocab_docs:
        sink.error(
            readers[0].mark(("spec",)),
            f"no {VOCABULARY_KIND} spec declares the element types, primitives, strategies and "
            "full-fp32 kinds that op, target, spelling and kernel specs name",
            breaks=[VOCABULARY],
        )
    ops: dict[str, OpSemantics] = {}
    families: dict[str, Mark] = {}
    for doc in op_docs:
        for family, body in doc.data["families"].items():
            # One file cannot repeat a key, but two files can each declare a family; a
            # family is looked up by its name (`ttlgen new op --kind`), so it is one fact.
            # Its ops are still read: they are not in doubt, only which family is.
            mark = doc.key_mark(("families", family))
            if family in families:
                sink.error(mark, f"op family {family!r} is declared twice (first at {families[family]})")
            else:
                families[family] = mark
            for op in _family(doc, family, body, vocab, sink):
                if op.name in ops:
                    first = ops[op.name]
                    sink.error(op.mark, f"op {op.name!r} is declared twice (first in family {first.family!r} at {first.mark})")
                    continue
                ops[op.name] = op
    return OpsModel(vocab, tuple(ops[name] for name in sorted(ops)))
