"""Which kernel-API calls the generated kernels make (``ttlgen.op_spelling/v1``).

One spelling file declares every call the generated kernels make: the compute kernel's
kernel-level calls (hardware start-up, data-format reconfiguration, copy, pack, packer L1
accumulation, the DST register protocol), the circular-buffer calls, the reader and writer
kernels' calls and DRAM tensor accessor,
the tile's face layout and each format's encoding (and whether the packer accumulates into L1 in it) (for tiles the reader builds in L1), and
per op and strategy the init call, call and uninit call, which operands each source
register unpacks, and the operand read as a scaler tile (a reduce's) with its value. Where tt-metal API levels
differ (``ttlgen.tt_metal_api`` specs), a call is given per level; the model holds one
:class:`LevelSpelling` per level. Headers and entry points are the API spec's, not this
file's.

A call is written as C++ with ``{placeholders}`` (``some_op<{attr.dim}>({lhs.cb}, {dst})``)
and parsed into a :class:`CallForm` (:mod:`ttlgen.model.call_forms`). What may appear
where is checked with located errors (one call per entry, known placeholders only, known
ops, strategies, operands, attributes and API levels); :mod:`ttlgen.model.spelling_check`
checks every call against each API level it applies to. Nothing outside the spec files
names a tt-metal function: the plan stage binds forms to typed values, checks them against
the API level and the printer prints the result.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from ttlgen.errors import DiagnosticSink, Entity, Mark, did_you_mean
from ttlgen.model.call_forms import (
    CPP_KEYWORDS,
    OP_PLACEHOLDERS,
    OPERAND_LEAVES,
    ArgKind,
    CallForm,
    FormArg,
    FormError,
    Literal,
    Placeholder,
    TypeForm,
    identifiers,
    kind_of,
    parse_call,
    parse_define_value,
)
from ttlgen.model.math_spec import Computation
from ttlgen.model.ops import VOCABULARY, OpSemantics, OpsModel, Route, op_entity, unknown_name
from ttlgen.model.tt_metal_api import ApiLevel, ApiModel, Emulation, FunctionForm, KernelKind
from ttlgen.spec.document import SpecDocument

__all__ = ["CPP_KEYWORDS", "ArgKind", "CallForm", "FormArg", "FormError", "Literal", "Placeholder", "TypeForm", "parse_call"]

KIND = "ttlgen.op_spelling"
FIXED = "fixed"
# The spelling keys of an op with an operand routed by its producer: that operand's route.
PRODUCER_ROUTES = (Route.DFB.value, Route.DST.value)

class ScalerKind(enum.Enum):
    """What a scaler tile holds for an attribute value (the spelling's ``scaler.value``)."""

    ONE = "one"  # 1
    MEAN = "mean"  # 1/N over the N elements reduced, spread over the passes: N^(-1/passes)


@dataclass(frozen=True)
class TileLayout:
    """A tile's elements in L1: faces row-major over the tile, each face row-major."""

    rows: int
    cols: int
    face_rows: int
    face_cols: int

    @property
    def elements(self) -> int:
        return self.rows * self.cols

    @property
    def faces(self) -> int:
        return (self.rows // self.face_rows) * (self.cols // self.face_cols)

    def extent(self, dimension: str) -> int:
        return {"rows": self.rows, "cols": self.cols}[dimension]


@dataclass(frozen=True)
class ScalerSpelling:
    """An operand the op reads as a scaler tile the reader builds in L1: zero except the
    first row of each face, which holds the value for the op's attributes."""

    operand: str
    reduces_by: str  # the attribute whose value says which tile dimensions are reduced
    reduces: tuple[tuple[str, tuple[str, ...]], ...]  # its value -> dimensions, one pass each
    value_by: str  # the attribute whose value selects the kind of scaler
    values: tuple[tuple[str, ScalerKind], ...]
    mark: Mark

    def value(self, attrs: Mapping[str, str], tile: TileLayout) -> float | None:
        """The scaler for an op with ``attrs`` (None: an attribute value it does not list)."""
        dimensions = dict(self.reduces).get(attrs.get(self.reduces_by, ""))
        kind = dict(self.values).get(attrs.get(self.value_by, ""))
        if dimensions is None or kind is None:
            return None
        if kind is ScalerKind.ONE:
            return 1.0
        count = math.prod(tile.extent(dimension) for dimension in dimensions)
        return float(count ** (-1.0 / len(dimensions)))


@dataclass(frozen=True)
class DefineSpelling:
    """A define the host passes to a kernel using the op at one API level (a macro the
    level declares as the host's), and its value: an attribute's spelling or a literal."""

    name: str
    value: FormArg  # a Placeholder of an attribute ({attr.<name>}), or a Literal
    mark: Mark = field(compare=False)

    def bind(self, values: Mapping[str, str]) -> str | None:
        """The value's text with ``values`` (placeholder key -> its spelled text); None
        when the placeholder has no value there."""
        if isinstance(self.value, Literal):
            return self.value.text
        return values.get(self.value.key)


@dataclass(frozen=True)
class Spelling:
    """One way to emit an op at one API level: its init call, call and uninit call."""

    op: str
    strategy: str  # a strategy name, or "fixed"
    init: CallForm
    call: CallForm
    uninit: CallForm | None
    unpack_srca: str | None  # operand name read through SrcA
    unpack_srcb: str | None
    attributes: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]  # attr -> (value -> spelling)
    accumulates_in_dst: bool
    mark: Mark
    # The unpacking instead when every operand it names has 32-bit elements (None: the same).
    unpack_32_bit: tuple[str | None, str | None] | None = None
    scaler: ScalerSpelling | None = None
    # Why the op has no function at this API level (its release lacks one); init and call
    # are then empty and a kernel using the op at the level is an error.
    absent: str | None = None
    # The defines the host passes to a kernel using the op at this level, by name.
    defines: tuple[DefineSpelling, ...] = ()

    def unpacked(self, element_bits: Mapping[str, int]) -> tuple[str | None, str | None]:
        """The operands read through (SrcA, SrcB), given the element bits of the operands."""
        wide = self.unpack_32_bit
        if wide is not None:
            named = [operand for operand in wide if operand is not None]
            if named and all(element_bits.get(operand) == 32 for operand in named):
                return wide
        return self.unpack_srca, self.unpack_srcb

    def attribute_spelling(self, attr: str, value: str) -> str | None:
        for name, values in self.attributes:
            if name == attr:
                return next((s for v, s in values if v == value), None)
        return None

    def forms(self) -> tuple[CallForm, ...]:
        if self.absent is not None:
            return ()
        return (self.init, self.call) + ((self.uninit,) if self.uninit is not None else ())


@dataclass(frozen=True)
class DstProtocol:
    """The DST register hand-over: math acquires and commits, pack waits and releases."""

    acquire: CallForm
    commit: CallForm
    wait: CallForm
    release: CallForm


@dataclass(frozen=True)
class CbCalls:
    """Circular-buffer synchronisation, the same calls in compute and dataflow kernels."""

    wait_front: CallForm
    pop_front: CallForm
    reserve_back: CallForm
    push_back: CallForm


@dataclass(frozen=True)
class KernelCalls:
    """The compute kernel's calls that belong to no single op."""

    startup_regular: CallForm  # the first computation unpacks its first CB operand to SrcA
    startup_reverse: CallForm  # ... to SrcB
    reconfig_srca: CallForm
    reconfig_srcb: CallForm
    reconfig_pack: CallForm
    copy_setup: CallForm
    copy: CallForm
    pack: CallForm
    l1_acc: CallForm
    dst: DstProtocol


class GeneratorField(enum.Enum):
    """What initialises one field of a brace-initialised DRAM address generator."""

    ADDRESS = "address"  # the tensor's DRAM address (a runtime argument)
    PAGE_SIZE = "page_size"  # one tile's size in the CB's format
    DATA_FORMAT = "data_format"  # the CB's data format


@dataclass(frozen=True)
class BracedAccessor:
    """A DRAM tensor's address generator, brace-initialised from ``fields`` in order."""

    type: TypeForm
    fields: tuple[GeneratorField, ...]


@dataclass(frozen=True)
class ConstructedAccessor:
    """A DRAM tensor's accessor built from compile-time accessor arguments: ``compile_time_args``
    at ``{offset}``, the next tensor's offset by the member call ``next_offset`` of those
    arguments, and the accessor by ``construct`` from ``{args}``, ``{address}``, ``{page_size}``."""

    compile_time_args: CallForm
    next_offset: CallForm
    construct: CallForm


Accessor = BracedAccessor | ConstructedAccessor


@dataclass(frozen=True)
class DataflowCalls:
    """The reader and writer kernels' calls and DRAM tensor accessor."""

    runtime_arg: CallForm
    tile_size: CallForm
    data_format: CallForm
    read_ptr: CallForm
    write_ptr: CallForm
    read_page: CallForm
    read_barrier: CallForm
    write_page: CallForm
    write_barrier: CallForm
    accessor: Accessor


@dataclass(frozen=True)
class Format:
    """The tt-metal data format of an element type, and the bytes of one tile."""

    element: str
    name: str
    tile_bytes: int
    element_bits: int  # the vocabulary's width of the element (tile_bytes holds one tile of them)
    mantissa_bits: int | None = None  # of a float format the reader may write elements in
    l1_accumulation: bool = False  # the packer can accumulate into L1 in this format
    code: int | None = None  # its number in the runtime's data-format enumeration ({format})


@dataclass(frozen=True)
class LevelSpelling:
    """Every call the kernels make at one API level."""

    level: str
    kernel: KernelCalls
    cb: CbCalls
    dataflow: DataflowCalls
    spellings: tuple[Spelling, ...]
    release: str = ""  # the release the level pins, e.g. "ttnn 0.81.1" (empty: none)

    def spelling(self, op: str, strategy: str | None) -> Spelling | None:
        return self._by_key.get((op, strategy or FIXED))

    @cached_property
    def _by_key(self) -> dict[tuple[str, str], Spelling]:
        # Every op use of every kernel is checked and lowered with its spelling: look it up,
        # not scan the level's spellings.
        return {(spelling.op, spelling.strategy): spelling for spelling in self.spellings}

    def forms(self) -> Iterator[CallForm]:
        """Every call form of the level."""
        for group in (self.kernel, self.kernel.dst, self.cb, self.dataflow, self.dataflow.accessor):
            for value in vars(group).values():
                if isinstance(value, CallForm):
                    yield value
        for spelling in self.spellings:
            yield from spelling.forms()


@dataclass(frozen=True)
class SpellingModel:
    """Which tt-metal API calls the generated kernels make, per API level."""

    formats: tuple[Format, ...]
    levels: tuple[LevelSpelling, ...]  # one per API level, in the API model's order
    api_level_names: frozenset[str]  # functions, types and entry points the API specs declare
    source: str
    # The math each op computes, as the emulation spec says its spelled calls compute it (a
    # function of the math spec or a runtime primitive: what its float64 reference
    # evaluates); ops whose calls compute nothing known are absent.
    computes: tuple[tuple[str, Computation], ...] = ()
    tile: TileLayout | None = None  # None: the spec states no layout (no tile is built in L1)
    # (level, op) of each op whose spelled call at that level selects the approximate form
    # of its math (the binding's `approximate:` template parameter is true there).
    approximate: frozenset[tuple[str, str]] = frozenset()

    def math_of(self, op: str) -> Computation | None:
        return self._computes_by_op.get(op)

    @cached_property
    def _computes_by_op(self) -> dict[str, Computation]:
        # Every lowered kernel asks it of each of its ops.
        return dict(self.computes)

    def selects_approximate(self, level: str, op: str) -> bool:
        return (level, op) in self.approximate

    def format(self, element: str) -> Format | None:
        return next((f for f in self.formats if f.element == element), None)

    def at(self, level: str) -> LevelSpelling | None:
        return next((lv for lv in self.levels if lv.level == level), None)

    def has_spelling(self, op: str, strategy: str | None) -> bool:
        """Whether the op is spelled for the strategy (or spelling key), at every level: a
        level where its release has no function for the op says so (``absent``)."""
        return bool(self.levels) and self.levels[0].spelling(op, strategy) is not None

    def forms(self) -> Iterator[CallForm]:
        """Every call form of every level."""
        for level in self.levels:
            yield from level.forms()

    @cached_property
    def api_names(self) -> frozenset[str]:
        """The tt-metal API's functions and types the specs name (the generator's code must not)."""
        names = {form.function for form in self.forms()}
        for level in self.levels:
            if isinstance(level.dataflow.accessor, BracedAccessor):
                names.add(level.dataflow.accessor.type.name)
        return frozenset(names | self.api_level_names)

    @cached_property
    def identifiers(self) -> frozenset[str]:
        """Every identifier the spelled code uses: API names plus enumerators and their scopes."""
        names = set(self.api_names)
        for form in self.forms():
            names.update(form.names())
        for level in self.levels:
            for spelling in level.spellings:
                for _, values in spelling.attributes:
                    for _, spelled in values:
                        names.update(identifiers(spelled))
                for define in spelling.defines:
                    if isinstance(define.value, Literal) and define.value.integer is None:
                        names.update(identifiers(define.value.text))
        return frozenset(names)


EMPTY = SpellingModel((), (), frozenset(), "")


def _computes(levels: Sequence[LevelSpelling], api: ApiModel, sink: DiagnosticSink) -> tuple[tuple[str, Computation], ...]:
    """What each op computes through its calls at every level and strategy, which must agree."""
    emulation = api.emulation
    if emulation is None:
        return ()
    found: dict[str, dict[Computation, Spelling]] = {}
    for level in levels:
        for spelling in level.spellings:
            math = emulation.computes(spelling.call.function)
            if math is not None:
                found.setdefault(spelling.op, {}).setdefault(math, spelling)
    out = []
    for op, by_math in sorted(found.items()):
        if len(by_math) > 1:
            ways = "; ".join(f"{m.name} through {s.call.function} ({s.strategy})" for m, s in sorted(by_math.items(), key=lambda item: item[0].name))
            first = next(iter(by_math.values()))
            sink.error(first.mark, f"op {op!r} computes different functions depending on its spelling: {ways} ({emulation.source})")
            continue
        out.append((op, next(iter(by_math))))
    return tuple(out)


_TRUTH = {"true": True, "1": True, "false": False, "0": False}


def _selects_approximate(spelling: Spelling, level: ApiLevel, emulation: Emulation, sink: DiagnosticSink) -> bool | None:
    """Whether the spelled call selects the approximate form of the math its binding passes
    (the value of the binding's `approximate:` template parameter in the call: written in
    the spelling, else the parameter's default, a define taking the emulator's value); None
    when the binding follows no approximate form."""
    call = spelling.call
    if not call.function:
        return None  # no call at this level (the op is absent there): nothing to ask the level about
    template = [a.text if isinstance(a, Literal) else None for a in call.template_args]
    form, _ = level.check_call(call.function, KernelKind.COMPUTE, template, call.arg_types)
    if not isinstance(form, FunctionForm):
        return None
    binding = emulation.binding(form)
    if binding is None or binding.approximate is None:
        return None
    function = emulation.math_function(binding)
    if function is None or function.approximate is None:
        return None
    params = form.signature.template
    index = next((i for i, p in enumerate(params) if p.name == binding.approximate), None)
    if index is None:
        return None  # the emulation spec's error says so
    value = template[index] if index < len(template) else params[index].default
    defines = dict(emulation.defines)
    seen: set[str] = set()
    while value is not None and value not in _TRUTH and value in defines and value not in seen:
        seen.add(value)
        value = defines[value]
    if value is None or value not in _TRUTH:
        shown = "a value the spelling computes" if value is None else repr(value)
        sink.error(
            call.mark,
            f"{call.text!r} selects the approximate form of {function.name!r} with {binding.approximate} = {shown}, which is not "
            f"true or false (nor a define of {emulation.source} that is); write it in the call, e.g. {call.function}<...>",
        )
        return None
    return _TRUTH[value]


def _approximate(levels: Sequence[LevelSpelling], api: ApiModel, sink: DiagnosticSink) -> frozenset[tuple[str, str]]:
    """(level, op) of each op whose calls select the approximate form of its math; the
    strategies of an op at one level must agree (its reference is one function)."""
    emulation = api.emulation
    if emulation is None:
        return frozenset()
    selected: set[tuple[str, str]] = set()
    for spelled in levels:
        level = api.level(spelled.level)
        if level is None:
            continue
        by_op: dict[str, dict[bool, Spelling]] = {}
        for spelling in spelled.spellings:
            choice = _selects_approximate(spelling, level, emulation, sink)
            by_op.setdefault(spelling.op, {}).setdefault(bool(choice), spelling)
        for op, choices in sorted(by_op.items()):
            if len(choices) > 1:
                ways = "; ".join(f"{'approximate' if c else 'exact'} through {s.call.function} ({s.strategy})" for c, s in sorted(choices.items()))
                sink.error(choices[True].mark, f"op {op!r} computes different forms of its math at level {spelled.level!r} depending on its strategy: {ways}")
            elif True in choices:
                selected.add((spelled.level, op))
    return frozenset(selected)


def _placeholders(*names: str) -> dict[str, ArgKind]:
    return {name: kind_of(name) for name in names}


class _Reader:
    """Reads the parts of the spelling document, reporting bad calls at their position.

    A call is read for every API level: a string (or ``{call, deprecated_ok}``) is the same
    call at every level; a mapping from each level's name to one gives each level its own.
    """

    def __init__(self, doc: SpecDocument, sink: DiagnosticSink, levels: Sequence[str]) -> None:
        self.doc = doc
        self.sink = sink
        self.levels = tuple(levels)

    def raw(self, path: tuple[str | int, ...]) -> Any:
        value = self.doc.data
        for part in path:
            value = value[part]
        return value

    def one(self, raw: Any, path: tuple[str | int, ...], kinds: Mapping[str, ArgKind]) -> CallForm:
        deprecated_ok = None
        if isinstance(raw, dict):
            deprecated_ok = " ".join(str(raw["deprecated_ok"]).split())
            path, raw = (*path, "call"), raw["call"]
        text, mark = str(raw), self.doc.mark(path)
        try:
            form = parse_call(text, mark, kinds)
        except FormError as exc:
            self.sink.error(mark, f"{text!r}: {exc}")
            return CallForm("", (), (), text, mark)
        return form if deprecated_ok is None else replace(form, deprecated_ok=deprecated_ok)

    def per_level(
        self, path: tuple[str | int, ...], is_level_map: bool, absent: frozenset[str] = frozenset()
    ) -> dict[str, tuple[str | int, ...]] | None:
        """The path of each level's value: the same path for every level, or one key each
        (levels in ``absent``, where the op has no function, give none)."""
        wanted = [lv for lv in self.levels if lv not in absent]
        if not is_level_map:
            return {level: path for level in wanted}
        keys = list(self.raw(path))
        unknown = [k for k in keys if k not in self.levels]
        for key in unknown:
            known = ", ".join(self.levels) or "none (no ttlgen.tt_metal_api spec)"
            self.sink.error(self.doc.key_mark((*path, key)), f"unknown API level {key!r}{did_you_mean(key, self.levels)}; levels: {known}")
        for key in keys:
            if key in absent:
                self.sink.error(self.doc.key_mark((*path, key)), f"API level {key!r} is listed under absent (no function for the op there): give it no call")
        missing = [lv for lv in wanted if lv not in keys]
        if missing:
            self.sink.error(self.doc.mark(path), f"no call for API level {', '.join(map(repr, missing))}: a per-level spelling gives every level its call (or the op's absent says why the level has none)")
        if unknown or missing or any(key in absent for key in keys):
            return None
        return {level: (*path, level) for level in wanted}

    def call(self, path: tuple[str | int, ...], kinds: Mapping[str, ArgKind], absent: frozenset[str] = frozenset()) -> dict[str, CallForm]:
        raw = self.raw(path)
        by_level = self.per_level(path, isinstance(raw, dict) and "call" not in raw, absent)
        if by_level is None:
            return {level: CallForm("", (), (), "", self.doc.mark(path)) for level in self.levels}
        parsed: dict[tuple[str | int, ...], CallForm] = {}
        for where in by_level.values():
            if where not in parsed:
                parsed[where] = self.one(self.raw(where), where, kinds)
        return {level: parsed[where] for level, where in by_level.items()}

    def type_form(self, path: tuple[str | int, ...]) -> TypeForm:
        text, mark = str(self.raw(path)), self.doc.mark(path)
        try:
            form = parse_call(f"{text}()", mark, {})
        except FormError as exc:
            self.sink.error(mark, f"{text!r} is not a type name with optional template arguments ({exc})")
            return TypeForm(text, (), mark)
        return TypeForm(form.function, tuple(a for a in form.template_args if isinstance(a, Literal)), mark)


_ACCESSOR_SHAPE_KEYS = frozenset(["type", "fields", "compile_time_args", "next_offset", "construct"])


def _kernel_calls(r: _Reader) -> dict[str, KernelCalls]:
    k = ("kernel",)
    cb = _placeholders("cb")
    startup = _placeholders("srca", "srcb", "pack")
    calls = {
        "startup_regular": r.call((*k, "startup", "regular"), startup),
        "startup_reverse": r.call((*k, "startup", "reverse"), startup),
        "reconfig_srca": r.call((*k, "reconfig_srca"), cb),
        "reconfig_srcb": r.call((*k, "reconfig_srcb"), cb),
        "reconfig_pack": r.call((*k, "reconfig_pack"), cb),
        "copy_setup": r.call((*k, "copy", "init"), cb),
        "copy": r.call((*k, "copy", "call"), _placeholders("cb", "tile", "dst")),
        "pack": r.call((*k, "pack"), _placeholders("dst", "cb", "tile")),
        "l1_acc": r.call((*k, "l1_acc"), _placeholders("enable")),
    }
    dst = [r.call((*k, "dst", step), {}) for step in ("acquire", "commit", "wait", "release")]
    return {
        level: KernelCalls(**{key: forms[level] for key, forms in calls.items()}, dst=DstProtocol(*(step[level] for step in dst)))
        for level in r.levels
    }


def _cb_calls(r: _Reader) -> dict[str, CbCalls]:
    kinds = _placeholders("cb", "tiles")
    steps = [r.call(("cb", step), kinds) for step in ("wait_front", "pop_front", "reserve_back", "push_back")]
    return {level: CbCalls(*(step[level] for step in steps)) for level in r.levels}


def _accessor(r: _Reader, path: tuple[str | int, ...]) -> Accessor:
    raw = r.raw(path)
    if "type" in raw:
        fields = [GeneratorField(f) for f in raw["fields"]]  # the schema lists each once
        return BracedAccessor(r.type_form((*path, "type")), tuple(fields))
    level = r.levels[0] if r.levels else ""

    def one(key: str, kinds: Mapping[str, ArgKind]) -> CallForm:
        forms = r.call((*path, key), kinds)
        return forms.get(level) or CallForm("", (), (), "", r.doc.mark(path))

    return ConstructedAccessor(
        compile_time_args=one("compile_time_args", _placeholders("offset")),
        next_offset=one("next_offset", {}),
        construct=one("construct", _placeholders("args", "address", "page_size")),
    )


def _dataflow_calls(r: _Reader) -> dict[str, DataflowCalls]:
    d = ("dataflow",)
    cb = _placeholders("cb")
    page = _placeholders("page", "accessor", "l1")
    calls = {
        "runtime_arg": r.call((*d, "runtime_arg"), _placeholders("index")),
        "tile_size": r.call((*d, "tile_size"), cb),
        "data_format": r.call((*d, "data_format"), cb),
        "read_ptr": r.call((*d, "read_ptr"), cb),
        "write_ptr": r.call((*d, "write_ptr"), cb),
        "read_page": r.call((*d, "read_page"), page),
        "read_barrier": r.call((*d, "read_barrier"), {}),
        "write_page": r.call((*d, "write_page"), page),
        "write_barrier": r.call((*d, "write_barrier"), {}),
    }
    raw = r.raw((*d, "accessor"))
    by_level = r.per_level((*d, "accessor"), not (_ACCESSOR_SHAPE_KEYS & set(raw)))
    accessors: dict[str, Accessor] = {}
    if by_level is not None:
        for level, where in by_level.items():
            accessors[level] = _accessor(_Reader(r.doc, r.sink, (level,)), where)
    fallback = BracedAccessor(TypeForm("", (), r.doc.mark((*d, "accessor"))), ())
    return {
        level: DataflowCalls(**{key: forms[level] for key, forms in calls.items()}, accessor=accessors.get(level, fallback))
        for level in r.levels
    }


def _op_placeholders(op: OpSemantics, attrs: Sequence[str]) -> dict[str, ArgKind]:
    kinds = _placeholders(*OP_PLACEHOLDERS)
    for operand in op.operands:
        for leaf, kind in OPERAND_LEAVES.items():
            kinds[f"{operand.name}.{leaf}"] = kind
    for attr in attrs:
        kinds[f"attr.{attr}"] = ArgKind.ENUMERATOR
    for attr in op.float_attributes:
        kinds[f"attr.{attr}"] = ArgKind.FLOAT
    return kinds


def scaler_entity(op: str) -> Entity:
    """The spelling of an op's scaler, which the tiles the reader builds for it rely on."""
    return Entity("scaler of op", op)


def _scaler(r: _Reader, op: OpSemantics, path: tuple[str | int, ...], raw: Mapping[str, Any], after: Sequence[Entity]) -> ScalerSpelling | None:
    """The op's scaler operand: an operand read from a dataflow buffer, and for each of two
    spelled attributes (every value of it) the dimensions reduced and the kind of scaler."""
    doc, sink = r.doc, r.sink
    breaks = [scaler_entity(op.name)]  # every error here breaks the op's scaler
    body = raw["scaler"]
    operands = [o.name for o in op.operands]
    ok = True
    if body["operand"] not in operands:
        sink.error(
            doc.mark((*path, "operand")),
            f"unknown operand {body['operand']!r} of op {op.name!r}; operands: {', '.join(sorted(operands))}{did_you_mean(body['operand'], operands)}",
            after=after,
            breaks=breaks,
        )
        ok = False
    elif any(s.routes[operands.index(body["operand"])] is not Route.DFB for s in op.strategies):
        sink.error(doc.mark((*path, "operand")), f"operand {body['operand']!r} of op {op.name!r} is not read from a dataflow buffer; a scaler tile is", after=after, breaks=breaks)
        ok = False
    spelled = dict(raw.get("attributes", {}))
    tables: list[tuple[str, dict[str, Any]]] = []
    for key in ("reduces", "value"):
        ((attribute, table),) = body[key].items()  # the schema allows exactly one attribute
        if attribute not in spelled:
            known = ", ".join(sorted(spelled)) or "none"
            sink.error(doc.key_mark((*path, key, attribute)), f"{attribute!r} is no attribute spelled for op {op.name!r}; spelled: {known}{did_you_mean(attribute, spelled)}", after=after, breaks=breaks)
            ok = False
        else:
            missing = [v for v in spelled[attribute] if v not in table]
            extra = [v for v in table if v not in spelled[attribute]]
            for value in extra:
                sink.error(doc.key_mark((*path, key, attribute, value)), f"{attribute}={value!r} is not a spelled value of attribute {attribute!r}; values: {', '.join(spelled[attribute])}", after=after, breaks=breaks)
            if missing:
                sink.error(doc.key_mark((*path, key, attribute)), f"no entry for {attribute}={', '.join(map(repr, missing))}: give every spelled value of {attribute!r}", after=after, breaks=breaks)
            ok = ok and not missing and not extra
        tables.append((attribute, table))
    if not ok:
        return None
    (reduces_by, reduces), (value_by, values) = tables
    return ScalerSpelling(
        operand=body["operand"],
        reduces_by=reduces_by,
        reduces=tuple((value, tuple(dims)) for value, dims in reduces.items()),
        value_by=value_by,
        values=tuple((value, ScalerKind(kind)) for value, kind in values.items()),
        mark=doc.key_mark(path),
    )


def _tile(doc: SpecDocument, sink: DiagnosticSink) -> TileLayout | None:
    raw = doc.data.get("tile")
    if raw is None:
        return None
    tile = TileLayout(raw["rows"], raw["cols"], raw["face_rows"], raw["face_cols"])
    for whole, part in (("rows", "face_rows"), ("cols", "face_cols")):
        if raw[whole] % raw[part]:
            sink.error(doc.mark(("tile", part)), f"{part} {raw[part]} does not divide the tile's {whole} ({raw[whole]}): faces tile the tile")
            return None
    return tile


def _op_spellings(r: _Reader, ops: OpsModel, api: ApiModel) -> dict[str, list[Spelling]]:
    doc, sink = r.doc, r.sink
    by_name = {op.name: op for op in ops.ops}
    strategy_names = {s.name for s in ops.vocabulary.strategies}
    spellings: dict[str, list[Spelling]] = {level: [] for level in r.levels}
    for op_name, per_strategy in doc.data["ops"].items():
        op = by_name.get(op_name)
        if op is None:
            sink.error(doc.key_mark(("ops", op_name)), f"unknown op {op_name!r}: no ttlgen.ops spec declares it{did_you_mean(op_name, by_name)}")
            continue
        # Checks against the op's strategies and operands mean nothing when its family is wrong.
        after = [op_entity(op_name)]
        for strategy, raw in per_strategy.items():
            path: tuple[str | int, ...] = ("ops", op_name, strategy)
            declared = [s.name for s in op.strategies]
            producer = op.by_producer
            if producer is not None:
                if strategy not in PRODUCER_ROUTES:
                    sink.error(
                        doc.key_mark(path),
                        f"op {op_name!r} reads operand {op.operands[producer].name!r} by its producer: spell it under "
                        f"{' and '.join(map(repr, PRODUCER_ROUTES))}, one per route the operand takes",
                        after=after,
                        breaks=[op_entity(op_name)],  # a kernel's "no spelling" follows from it
                    )
            elif op.fixed and strategy != FIXED:
                sink.error(doc.key_mark(path), f"op {op_name!r} has fixed execution semantics; spell it under 'fixed'", after=after)
            elif not op.fixed and strategy not in declared:
                known = ", ".join(str(s) for s in declared)
                if strategy in strategy_names:
                    problem = f"{strategy!r} is not a strategy of this op; op {op_name!r} has: {known}"
                else:
                    problem = f"{strategy!r} is not a strategy; op {op_name!r} has: {known}{did_you_mean(strategy, map(str, declared))}"
                sink.error(doc.key_mark(path), problem, after=after)
            operands = [o.name for o in op.operands]
            for key in ("unpack", "unpack_32_bit"):
                for reg in ("srca", "srcb"):
                    operand = raw.get(key, {}).get(reg)
                    if operand is None:
                        continue
                    if operand not in operands:
                        sink.error(
                            doc.mark((*path, key, reg)),
                            f"unknown operand {operand!r} of op {op_name!r}; operands: {', '.join(sorted(operands))}{did_you_mean(operand, operands)}",
                            after=after,
                        )
                        continue
                    route = _route(op, strategy, operands.index(operand))
                    if route is not Route.DFB:
                        sink.error(
                            doc.mark((*path, key, reg)),
                            f"operand {operand!r} of op {op_name!r} is routed to {route.value} "
                            f"in the {strategy} strategy; only dataflow-buffer operands are unpacked",
                            after=after,
                        )
            wide = raw.get("unpack_32_bit")
            scaler = _scaler(r, op, (*path, "scaler"), raw, after) if "scaler" in raw else None
            attributes = raw.get("attributes", {})
            for name in attributes:
                if name in op.float_attributes:
                    sink.error(
                        doc.key_mark((*path, "attributes", name)),
                        f"attribute {name!r} of op {op_name!r} is a number ({op.source}): {{attr.{name}}} passes it as an fp32 literal; "
                        "only an attribute with listed values is spelled by a table",
                        after=after,
                    )
            attributes = {name: values for name, values in attributes.items() if name not in op.float_attributes}
            kinds = _op_placeholders(op, list(attributes))
            absent = _absent(r, (*path, "absent"), raw.get("absent"))
            defines = _defines(r, api, op, (*path, "defines"), raw.get("defines"), list(attributes), frozenset(absent))
            nothing = CallForm("", (), (), "", doc.key_mark(path))
            if len(absent) == len(r.levels):
                for key in ("init", "call", "uninit"):
                    if key in raw:
                        sink.error(doc.key_mark((*path, key)), f"op {op_name!r} is absent at every API level; it has no {key} to spell")
                init: dict[str, CallForm] = {}
                call: dict[str, CallForm] = {}
                uninit: dict[str, CallForm] | None = None
            else:
                for key in ("init", "call"):
                    if key not in raw:
                        missing_levels = ", ".join(repr(lv) for lv in r.levels if lv not in absent)
                        sink.error(doc.key_mark(path), f"no {key} for op {op_name!r} at API level {missing_levels}: spell it, or say why the level has no function for it under absent")
                init = r.call((*path, "init"), kinds, frozenset(absent)) if "init" in raw else {}
                call = r.call((*path, "call"), kinds, frozenset(absent)) if "call" in raw else {}
                uninit = r.call((*path, "uninit"), kinds, frozenset(absent)) if "uninit" in raw else None
            for level in r.levels:
                spellings[level].append(
                    Spelling(
                        op=op_name,
                        strategy=strategy,
                        init=init.get(level, nothing),
                        call=call.get(level, nothing),
                        uninit=uninit.get(level) if uninit is not None else None,
                        unpack_srca=raw.get("unpack", {}).get("srca"),
                        unpack_srcb=raw.get("unpack", {}).get("srcb"),
                        attributes=tuple((name, tuple(values.items())) for name, values in sorted(attributes.items())),
                        accumulates_in_dst=bool(raw.get("accumulates_in_dst", False)),
                        mark=doc.key_mark(path),
                        unpack_32_bit=(wide.get("srca"), wide.get("srcb")) if wide is not None else None,
                        scaler=scaler,
                        absent=absent.get(level),
                        defines=defines.get(level, ()),
                    )
                )
    return spellings


def _route(op: OpSemantics, key: str, operand: int) -> Route:
    """The route of ``operand`` under the spelling key ``key`` (a strategy, ``fixed``, or the
    route of the operand read by its producer)."""
    if op.by_producer is not None and key in PRODUCER_ROUTES:
        return Route(key) if operand == op.by_producer else op.strategies[0].routes[operand]
    strategy = next((s for s in op.strategies if (s.name or FIXED) == key), None)
    return strategy.routes[operand] if strategy is not None else Route.DFB


def _absent(r: _Reader, path: tuple[str | int, ...], raw: Any) -> dict[str, str]:
    """The API levels where the op has no function, with why: one text for every level, or
    one per level named."""
    if raw is None:
        return {}
    if isinstance(raw, str):
        return {level: " ".join(raw.split()) for level in r.levels}
    out = {}
    for level, why in raw.items():
        if level not in r.levels:
            known = ", ".join(r.levels) or "none (no ttlgen.tt_metal_api spec)"
            r.sink.error(r.doc.key_mark((*path, level)), f"unknown API level {level!r}{did_you_mean(level, r.levels)}; levels: {known}")
            continue
        out[level] = " ".join(str(why).split())
    return out


def _defines(
    r: _Reader, api: ApiModel, op: OpSemantics, path: tuple[str | int, ...], raw: Any, attrs: Sequence[str], absent: frozenset[str]
) -> dict[str, tuple[DefineSpelling, ...]]:
    """The defines the host passes to a kernel using the op, per API level: each a macro the
    level declares as the host's, its value an attribute placeholder or a literal (a define
    holds one value for the whole kernel, so no operand's CB, tile or DST slot)."""
    if raw is None:
        return {}
    doc, sink = r.doc, r.sink
    kinds = {f"attr.{a}": ArgKind.ENUMERATOR for a in attrs} | {f"attr.{a}": ArgKind.FLOAT for a in op.float_attributes}
    out: dict[str, tuple[DefineSpelling, ...]] = {}
    for level_name, table in raw.items():
        level = api.level(level_name)
        if level is None:
            known = ", ".join(r.levels) or "none (no ttlgen.tt_metal_api spec)"
            sink.error(doc.key_mark((*path, level_name)), f"unknown API level {level_name!r}{did_you_mean(level_name, r.levels)}; levels: {known}")
            continue
        if level_name in absent:
            sink.error(doc.key_mark((*path, level_name)), f"API level {level_name!r} is listed under absent (no function for op {op.name!r} there): a kernel cannot use the op there, so it needs no defines")
            continue
        declared = {d.name: d for d in level.defines}
        host = sorted(name for name, d in declared.items() if d.host)
        found = []
        for name, text in table.items():
            where = (*path, level_name, name)
            define = declared.get(name)
            if define is None or not define.host:
                listed = ", ".join(host) or "none"
                why = (
                    f"{name!r} is a define of level {level_name!r} ({define.mark}) that the host does not pass"
                    if define is not None
                    else f"level {level_name!r} declares no define {name!r} ({level.source})"
                )
                sink.error(
                    doc.key_mark(where),
                    f"{why}; a kernel's defines are the macros the level declares as the host's ({{host: true, ...}} under defines): {listed}{did_you_mean(name, host)}",
                )
                continue
            try:
                value = parse_define_value(str(text), kinds)
            except FormError as exc:
                sink.error(doc.mark(where), f"{str(text)!r}: {exc}")
                continue
            found.append(DefineSpelling(name, value, doc.mark(where)))
        out[level_name] = tuple(sorted(found, key=lambda d: d.name))
    return out


def _release_name(api: ApiModel, level: str) -> str:
    found = api.level(level)
    return found.release.name if found is not None and found.release is not None else ""


def build(documents: Sequence[SpecDocument], sink: DiagnosticSink, ops: OpsModel, api: ApiModel) -> SpellingModel:
    docs = [d for d in documents if d.kind == KIND]
    if not docs:
        return EMPTY
    for extra in docs[1:]:
        sink.error(extra.mark(("spec",)), f"a second {KIND} file; spellings are declared once (first: {docs[0].display})")
    doc = docs[0]
    data = doc.data
    if not api.levels:
        sink.error(doc.mark(("spec",)), "no ttlgen.tt_metal_api spec declares an API level to spell kernels for")
    reader = _Reader(doc, sink, api.level_names)
    kernel = _kernel_calls(reader)
    cb = _cb_calls(reader)
    dataflow = _dataflow_calls(reader)
    spellings = _op_spellings(reader, ops, api)
    elements = {e.name: e for e in ops.vocabulary.element_types}
    tile = _tile(doc, sink)
    formats = []
    codes: dict[int, str] = {}
    for element, raw in sorted(data["formats"].items()):
        if element not in elements:
            sink.error(doc.key_mark(("formats", element)), unknown_name("element type", element, sorted(elements)), after=[VOCABULARY])
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", raw["name"]):  # printed into program.json for a runtime
            sink.error(doc.mark(("formats", element, "name")), f"{raw['name']!r} is not a data format name (a C++ enumerator, letters, digits and _)")
        mantissa = raw.get("mantissa_bits")
        vocabulary = elements.get(element)
        if tile is not None and vocabulary is not None:
            if raw["tile_bytes"] * 8 != tile.elements * vocabulary.bits:
                # The element's width is the vocabulary's fact; a page of another size makes
                # every CB of this format disagree with the runtime's tile size.
                expected = tile.elements * vocabulary.bits // 8
                sink.error(
                    doc.mark(("formats", element, "tile_bytes")),
                    f"{raw['tile_bytes']} bytes are not one {tile.rows}x{tile.cols} tile of {element} "
                    f"({tile.elements} elements of {vocabulary.bits} bits, {vocabulary.mark}): expected {expected}",
                    after=[VOCABULARY],
                )
            elif mantissa is not None and mantissa > vocabulary.bits - 2:
                sink.error(
                    doc.mark(("formats", element, "mantissa_bits")),
                    f"{mantissa} mantissa bits leave no exponent in a {vocabulary.bits}-bit element (a sign and an exponent take at least 2)",
                )
        formats.append(
            Format(
                element, raw["name"], raw["tile_bytes"], vocabulary.bits if vocabulary else 0, mantissa,
                bool(raw.get("l1_accumulation", False)), raw.get("code"),
            )
        )
        if "code" in raw and codes.setdefault(raw["code"], element) != element:
            sink.error(doc.mark(("formats", element, "code")), f"format code {raw['code']} is also {codes[raw['code']]!r}'s: each data format has its own")
    levels = tuple(
        LevelSpelling(level, kernel[level], cb[level], dataflow[level], tuple(spellings[level]), _release_name(api, level))
        for level in api.level_names
    )
    api_names = frozenset(name for level in api.levels for name in level.names())
    computes = _computes(levels, api, sink)
    approximate = _approximate(levels, api, sink)
    return SpellingModel(tuple(formats), levels, api_names, doc.source, computes, tile, approximate)
