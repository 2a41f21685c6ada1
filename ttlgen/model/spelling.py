"""How kernels are spelled in tt-metal's kernel API (``ttlgen.op_spelling/v1``).

One spelling file declares every tt-metal name the generated kernels use: the compute
kernel's entry point and kernel-level calls (hardware init, data-format reconfiguration,
copy, pack, packer L1 accumulation, the DST register protocol), the circular-buffer calls,
the reader and writer kernels' calls and address generator, DST capacity per destination
width and sync mode, and per op and strategy the include, init call and call.

A call is written as C++ with ``{placeholders}`` (``some_op<{attr.dim}>({lhs.cb}, {dst})``)
and parsed here into a :class:`CallForm`: one function name, template arguments and
arguments, each a placeholder of a known :class:`ArgKind` or a literal. What may appear
where is checked with located errors (one call per entry, known placeholders only, known
ops, strategies, operands and attributes). Nothing outside this file names a tt-metal
function: the plan stage binds forms to typed values and the printer prints the result.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ttlgen.errors import DiagnosticSink, Mark, did_you_mean
from ttlgen.model.ops import VOCABULARY, OpSemantics, OpsModel, Route, op_entity, unknown_name
from ttlgen.spec.document import SpecDocument

KIND = "ttlgen.op_spelling"
FIXED = "fixed"

# C++ keywords and literals: never a name the spelling spec introduces.
CPP_KEYWORDS = frozenset(
    [
        "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
        "case", "catch", "char", "char16_t", "char32_t", "char8_t", "class", "co_await",
        "co_return", "co_yield", "compl", "concept", "const", "const_cast", "consteval",
        "constexpr", "constinit", "continue", "decltype", "default", "delete", "do", "double",
        "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
        "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept",
        "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public",
        "register", "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
        "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
        "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
        "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
    ]
)


class ArgKind(enum.Enum):
    """What a call argument is; every placeholder has exactly one kind."""

    CB = "cb"  # a circular-buffer (dataflow buffer) id
    TILE = "tile"  # a tile of a CB's waited or reserved block, or a page of a DRAM tensor
    DST = "dst"  # a DST slot
    COUNT = "count"  # a number of tiles, or a block dimension in tiles
    FLAG = "flag"  # an on/off switch (0 or 1)
    ENUMERATOR = "enumerator"  # an op attribute's value, as `attributes` spells it
    INDEX = "index"  # a runtime-argument index
    ADDRESS = "address"  # an L1 address
    ACCESSOR = "accessor"  # a DRAM tensor's address generator
    LITERAL = "literal"  # written in the spelling itself: 0, true, PoolType::SUM, uint32_t


# The kind of each placeholder, by its name (or by the leaf after an operand name).
_NAMED_KINDS = {
    "dst": ArgKind.DST,
    "pack": ArgKind.CB,
    "cb": ArgKind.CB,
    "srca": ArgKind.CB,
    "srcb": ArgKind.CB,
    "tile": ArgKind.TILE,
    "page": ArgKind.TILE,
    "rt": ArgKind.COUNT,
    "ct": ArgKind.COUNT,
    "kt": ArgKind.COUNT,
    "tiles": ArgKind.COUNT,
    "enable": ArgKind.FLAG,
    "index": ArgKind.INDEX,
    "l1": ArgKind.ADDRESS,
    "accessor": ArgKind.ACCESSOR,
}
_OPERAND_LEAVES = {"cb": ArgKind.CB, "tile": ArgKind.TILE, "dst": ArgKind.DST}
_OP_PLACEHOLDERS = ("dst", "pack", "rt", "ct", "kt")


@dataclass(frozen=True)
class Placeholder:
    key: str  # "dst", "lhs.cb", "attr.bcast"
    kind: ArgKind


@dataclass(frozen=True)
class Literal:
    text: str  # an integer, or a (qualified) identifier or keyword literal

    @property
    def integer(self) -> int | None:
        return int(self.text) if self.text.isdigit() else None


FormArg = Placeholder | Literal


@dataclass(frozen=True)
class CallForm:
    """One spelled call: ``function<template_args>(args)``, from the spec at ``mark``."""

    function: str
    template_args: tuple[FormArg, ...]
    args: tuple[FormArg, ...]
    text: str  # as written, for messages
    mark: Mark = field(compare=False)

    def names(self) -> Iterator[str]:
        """The identifiers this call introduces: its function and literal scopes/names."""
        yield self.function
        for arg in (*self.template_args, *self.args):
            if isinstance(arg, Literal) and arg.integer is None:
                yield from _identifiers(arg.text)


@dataclass(frozen=True)
class TypeForm:
    """A C++ type named by the spec, with optional literal template arguments."""

    name: str
    template_args: tuple[Literal, ...]
    mark: Mark = field(compare=False)


@dataclass(frozen=True)
class Entry:
    """The lines that open and close a kernel's entry point, around its body."""

    begin: tuple[str, ...]
    end: tuple[str, ...]

    def names(self) -> Iterator[str]:
        for line in (*self.begin, *self.end):
            if line.lstrip().startswith("//"):
                continue
            yield from (w for w in _identifiers(line.split("//")[0]) if w not in CPP_KEYWORDS)


@dataclass(frozen=True)
class Spelling:
    """One way to emit an op: its header, init call and call."""

    op: str
    strategy: str  # a strategy name, or "fixed"
    include: str
    init: CallForm
    call: CallForm
    uninit: CallForm | None
    unpack_srca: str | None  # operand name read through SrcA
    unpack_srcb: str | None
    attributes: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]  # attr -> (value -> spelling)
    accumulates_in_dst: bool
    mark: Mark

    def attribute_spelling(self, attr: str, value: str) -> str | None:
        for name, values in self.attributes:
            if name == attr:
                return next((s for v, s in values if v == value), None)
        return None

    def forms(self) -> tuple[CallForm, ...]:
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
    """The compute kernel's entry point and the calls that belong to no single op."""

    entry: Entry
    include: str
    init_include: str
    init: CallForm
    reconfig_srca: CallForm
    reconfig_srcb: CallForm
    reconfig_pack: CallForm
    copy_include: str
    copy_init: CallForm
    copy: CallForm
    pack: CallForm
    l1_acc: CallForm
    dst: DstProtocol


class GeneratorField(enum.Enum):
    """What initialises one field of a DRAM tensor's address generator."""

    ADDRESS = "address"  # the tensor's DRAM address (a runtime argument)
    PAGE_SIZE = "page_size"  # one tile's size in the CB's format
    DATA_FORMAT = "data_format"  # the CB's data format


@dataclass(frozen=True)
class AddressGenerator:
    type: TypeForm
    fields: tuple[GeneratorField, ...]  # brace-initialised in this order
    page_size: str  # the member holding one page's size in bytes


@dataclass(frozen=True)
class DataflowCalls:
    """The reader and writer kernels: entry point, header, calls and address generator."""

    entry: Entry
    include: str
    runtime_arg: CallForm
    tile_size: CallForm
    data_format: CallForm
    read_ptr: CallForm
    write_ptr: CallForm
    read_page: CallForm
    read_barrier: CallForm
    write_page: CallForm
    write_barrier: CallForm
    address_generator: AddressGenerator


@dataclass(frozen=True)
class DstCapacity:
    dest_width: int
    sync: str
    tiles: int


@dataclass(frozen=True)
class Format:
    element: str
    name: str
    tile_bytes: int


@dataclass(frozen=True)
class SpellingModel:
    api: str
    formats: tuple[Format, ...]
    capacities: tuple[DstCapacity, ...]
    kernel: KernelCalls | None
    cb: CbCalls | None
    dataflow: DataflowCalls | None
    spellings: tuple[Spelling, ...]
    source: str

    def capacity(self, dest_width: int, sync: str) -> int | None:
        for entry in self.capacities:
            if entry.dest_width == dest_width and entry.sync == sync:
                return entry.tiles
        return None

    def format(self, element: str) -> Format | None:
        return next((f for f in self.formats if f.element == element), None)

    def spelling(self, op: str, strategy: str | None) -> Spelling | None:
        wanted = strategy or FIXED
        return next((s for s in self.spellings if s.op == op and s.strategy == wanted), None)

    def forms(self) -> Iterator[CallForm]:
        """Every call form of the spec."""
        for group in (self.kernel, self.kernel.dst if self.kernel else None, self.cb, self.dataflow):
            if group is None:
                continue
            for value in vars(group).values():
                if isinstance(value, CallForm):
                    yield value
        for spelling in self.spellings:
            yield from spelling.forms()

    @cached_property
    def api_names(self) -> frozenset[str]:
        """The tt-metal API's functions and types the spec names (the generator's code must not)."""
        names = {form.function for form in self.forms()}
        if self.dataflow is not None:
            names.add(self.dataflow.address_generator.type.name)
        for entry in (self.kernel.entry if self.kernel else None, self.dataflow.entry if self.dataflow else None):
            if entry is not None:
                names.update(entry.names())
        return frozenset(names)

    @cached_property
    def identifiers(self) -> frozenset[str]:
        """Every identifier the spelled code uses: API names plus enumerators and their scopes."""
        names = set(self.api_names)
        for form in self.forms():
            names.update(form.names())
        for spelling in self.spellings:
            for _, values in spelling.attributes:
                for _, spelled in values:
                    names.update(_identifiers(spelled))
        return frozenset(names)


EMPTY = SpellingModel("", (), (), None, None, None, (), "")


# ---------------------------------------------------------------------------- parsing


def _identifiers(text: str) -> Iterator[str]:
    word = ""
    for ch in f"{text} ":
        if ch.isalnum() or ch == "_":
            word += ch
            continue
        if word and not word[0].isdigit():
            yield word
        word = ""


def _brace_depths(lines: Sequence[str], depth: int = 0) -> list[int]:
    """The block depth after each line (comments after ``//`` not counted), from ``depth``."""
    depths = [depth]
    for line in lines:
        code = line.split("//")[0]
        depth += code.count("{") - code.count("}")
        depths.append(depth)
    return depths


class _FormError(Exception):
    pass


class _Scanner:
    """Reads one spelled call: name [< args >] ( args ), nothing after it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            found = repr(self.text[self.pos :]) if self.pos < len(self.text) else "the end"
            raise _FormError(f"expected {ch!r} at {found}")
        self.pos += 1

    def name(self) -> str:
        self.skip()
        start = self.pos
        while self.pos < len(self.text) and (self.text[self.pos].isalnum() or self.text[self.pos] in "_:"):
            self.pos += 1
        word = self.text[start : self.pos]
        if not word or word[0].isdigit() or any(not part for part in word.split("::")):
            raise _FormError(f"expected a name at {self.text[start:]!r}")
        return word

    def argument(self, kinds: Mapping[str, ArgKind] | None) -> FormArg:
        if self.peek() == "{":
            self.pos += 1
            end = self.text.find("}", self.pos)
            if end < 0:
                raise _FormError("unclosed '{'")
            key = self.text[self.pos : end].strip()
            self.pos = end + 1
            if kinds is not None and key not in kinds:
                allowed = ", ".join(f"{{{k}}}" for k in sorted(kinds)) or "none"
                raise _FormError(f"unknown placeholder {{{key}}}; placeholders here: {allowed}")
            kind = kinds[key] if kinds is not None else _kind_of(key)
            return Placeholder(key, kind)
        self.skip()
        start = self.pos
        if self.peek().isdigit():
            while self.pos < len(self.text) and self.text[self.pos].isdigit():
                self.pos += 1
            return Literal(self.text[start : self.pos])
        return Literal(self.name())

    def arguments(self, close: str, kinds: Mapping[str, ArgKind] | None) -> tuple[FormArg, ...]:
        out: list[FormArg] = []
        if self.peek() == close:
            self.pos += 1
            return ()
        while True:
            out.append(self.argument(kinds))
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect(close)
            return tuple(out)


def _kind_of(key: str) -> ArgKind:
    root, _, leaf = key.partition(".")
    if root == "attr":
        return ArgKind.ENUMERATOR
    if leaf:
        return _OPERAND_LEAVES.get(leaf, ArgKind.LITERAL)
    return _NAMED_KINDS.get(key, ArgKind.LITERAL)


def parse_call(text: str, mark: Mark, kinds: Mapping[str, ArgKind] | None) -> CallForm:
    """``text`` as one call; ``kinds`` is the placeholders allowed there (None: any)."""
    scanner = _Scanner(text)
    function = scanner.name()
    template_args: tuple[FormArg, ...] = ()
    if scanner.peek() == "<":
        scanner.pos += 1
        template_args = scanner.arguments(">", kinds)
    scanner.expect("(")
    args = scanner.arguments(")", kinds)
    scanner.skip()
    if scanner.pos != len(scanner.text):
        raise _FormError(f"{scanner.text[scanner.pos:]!r} follows the call; write exactly one call, without ';'")
    return CallForm(function, template_args, args, text, mark)


def _placeholders(*names: str) -> dict[str, ArgKind]:
    return {name: _kind_of(name) for name in names}


class _Reader:
    """Reads the parts of the spelling document, reporting bad calls at their position."""

    def __init__(self, doc: SpecDocument, sink: DiagnosticSink) -> None:
        self.doc = doc
        self.sink = sink

    def raw(self, path: tuple[str | int, ...]) -> Any:
        value = self.doc.data
        for part in path:
            value = value[part]
        return value

    def call(self, path: tuple[str | int, ...], kinds: Mapping[str, ArgKind]) -> CallForm:
        text, mark = str(self.raw(path)), self.doc.mark(path)
        try:
            return parse_call(text, mark, kinds)
        except _FormError as exc:
            self.sink.error(mark, f"{text!r}: {exc}")
            return CallForm("", (), (), text, mark)

    def entry(self, path: tuple[str | int, ...]) -> Entry:
        raw = self.raw(path)
        entry = Entry(tuple(raw["begin"]), tuple(raw["end"]))
        # The body is printed between the lines: they must open blocks and close exactly those.
        opened = _brace_depths(entry.begin)
        closed = _brace_depths(entry.end, opened[-1])
        if opened[-1] < 1 or min(opened) < 0 or closed[-1] != 0 or min(closed) < 0:
            self.sink.error(
                self.doc.mark(path),
                f"the begin lines open {opened[-1]} brace(s) and the end lines leave {closed[-1]} open; "
                "begin must open the blocks around the body and end close exactly those",
            )
        return entry

    def type_form(self, path: tuple[str | int, ...]) -> TypeForm:
        text, mark = str(self.raw(path)), self.doc.mark(path)
        try:
            form = parse_call(f"{text}()", mark, {})
        except _FormError as exc:
            self.sink.error(mark, f"{text!r} is not a type name with optional template arguments ({exc})")
            return TypeForm(text, (), mark)
        return TypeForm(form.function, tuple(a for a in form.template_args if isinstance(a, Literal)), mark)


def _kernel_calls(r: _Reader) -> KernelCalls:
    k = ("kernel",)
    data = r.doc.data["kernel"]
    cb = _placeholders("cb")
    return KernelCalls(
        entry=r.entry((*k, "entry")),
        include=data["include"],
        init_include=data["init"]["include"],
        init=r.call((*k, "init", "call"), _placeholders("srca", "srcb", "pack")),
        reconfig_srca=r.call((*k, "reconfig_srca"), cb),
        reconfig_srcb=r.call((*k, "reconfig_srcb"), cb),
        reconfig_pack=r.call((*k, "reconfig_pack"), cb),
        copy_include=data["copy"]["include"],
        copy_init=r.call((*k, "copy", "init"), cb),
        copy=r.call((*k, "copy", "call"), _placeholders("cb", "tile", "dst")),
        pack=r.call((*k, "pack"), _placeholders("dst", "cb", "tile")),
        l1_acc=r.call((*k, "l1_acc"), _placeholders("enable")),
        dst=DstProtocol(*(r.call((*k, "dst", step), {}) for step in ("acquire", "commit", "wait", "release"))),
    )


def _cb_calls(r: _Reader) -> CbCalls:
    kinds = _placeholders("cb", "tiles")
    return CbCalls(*(r.call(("cb", step), kinds) for step in ("wait_front", "pop_front", "reserve_back", "push_back")))


def _dataflow_calls(r: _Reader) -> DataflowCalls:
    d = ("dataflow",)
    data = r.doc.data["dataflow"]
    cb = _placeholders("cb")
    page = _placeholders("page", "accessor", "l1")
    generator = data["address_generator"]
    fields = [GeneratorField(f) for f in generator["fields"]]  # the schema lists each once
    return DataflowCalls(
        entry=r.entry((*d, "entry")),
        include=data["include"],
        runtime_arg=r.call((*d, "runtime_arg"), _placeholders("index")),
        tile_size=r.call((*d, "tile_size"), cb),
        data_format=r.call((*d, "data_format"), cb),
        read_ptr=r.call((*d, "read_ptr"), cb),
        write_ptr=r.call((*d, "write_ptr"), cb),
        read_page=r.call((*d, "read_page"), page),
        read_barrier=r.call((*d, "read_barrier"), {}),
        write_page=r.call((*d, "write_page"), page),
        write_barrier=r.call((*d, "write_barrier"), {}),
        address_generator=AddressGenerator(
            r.type_form((*d, "address_generator", "type")), tuple(fields), generator["page_size"]
        ),
    )


def _op_placeholders(op: OpSemantics, attrs: Sequence[str]) -> dict[str, ArgKind]:
    kinds = _placeholders(*_OP_PLACEHOLDERS)
    for operand in op.operands:
        for leaf, kind in _OPERAND_LEAVES.items():
            kinds[f"{operand.name}.{leaf}"] = kind
    for attr in attrs:
        kinds[f"attr.{attr}"] = ArgKind.ENUMERATOR
    return kinds


def _op_spellings(r: _Reader, ops: OpsModel) -> list[Spelling]:
    doc, sink = r.doc, r.sink
    by_name = {op.name: op for op in ops.ops}
    strategy_names = {s.name for s in ops.vocabulary.strategies}
    spellings: list[Spelling] = []
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
            if op.fixed and strategy != FIXED:
                sink.error(doc.key_mark(path), f"op {op_name!r} has fixed execution semantics; spell it under 'fixed'", after=after)
            elif not op.fixed and strategy not in declared:
                known = ", ".join(str(s) for s in declared)
                if strategy in strategy_names:
                    problem = f"{strategy!r} is not a strategy of this op; op {op_name!r} has: {known}"
                else:
                    problem = f"{strategy!r} is not a strategy; op {op_name!r} has: {known}{did_you_mean(strategy, map(str, declared))}"
                sink.error(doc.key_mark(path), problem, after=after)
            operands = [o.name for o in op.operands]
            for reg in ("srca", "srcb"):
                operand = raw.get("unpack", {}).get(reg)
                if operand is None:
                    continue
                if operand not in operands:
                    sink.error(
                        doc.mark((*path, "unpack", reg)),
                        f"unknown operand {operand!r} of op {op_name!r}; operands: {', '.join(sorted(operands))}{did_you_mean(operand, operands)}",
                        after=after,
                    )
                    continue
                strategy_sem = next((s for s in op.strategies if (s.name or FIXED) == strategy), None)
                route = strategy_sem.routes[operands.index(operand)] if strategy_sem is not None else Route.DFB
                if route is not Route.DFB:
                    sink.error(
                        doc.mark((*path, "unpack", reg)),
                        f"operand {operand!r} of op {op_name!r} is routed to {route.value} "
                        f"in the {strategy} strategy; only dataflow-buffer operands are unpacked",
                        after=after,
                    )
            attributes = raw.get("attributes", {})
            kinds = _op_placeholders(op, list(attributes))
            spellings.append(
                Spelling(
                    op=op_name,
                    strategy=strategy,
                    include=raw["include"],
                    init=r.call((*path, "init"), kinds),
                    call=r.call((*path, "call"), kinds),
                    uninit=r.call((*path, "uninit"), kinds) if "uninit" in raw else None,
                    unpack_srca=raw.get("unpack", {}).get("srca"),
                    unpack_srcb=raw.get("unpack", {}).get("srcb"),
                    attributes=tuple((name, tuple(values.items())) for name, values in sorted(attributes.items())),
                    accumulates_in_dst=bool(raw.get("accumulates_in_dst", False)),
                    mark=doc.key_mark(path),
                )
            )
    return spellings


def build(documents: Sequence[SpecDocument], sink: DiagnosticSink, ops: OpsModel) -> SpellingModel:
    docs = [d for d in documents if d.kind == KIND]
    if not docs:
        return EMPTY
    for extra in docs[1:]:
        sink.error(extra.mark(("spec",)), f"a second {KIND} file; spellings are declared once (first: {docs[0].display})")
    doc = docs[0]
    data = doc.data
    capacities = []
    seen_cap: set[tuple[int, str]] = set()
    for index, raw in enumerate(data["dst_capacity"]):
        key = (raw["dest_width"], raw["sync"])
        if key in seen_cap:
            sink.error(doc.mark(("dst_capacity", index)), f"duplicate DST capacity for {key[0]}-bit {key[1]}")
        seen_cap.add(key)
        capacities.append(DstCapacity(raw["dest_width"], raw["sync"], raw["tiles"]))
    reader = _Reader(doc, sink)
    kernel = _kernel_calls(reader)
    cb = _cb_calls(reader)
    dataflow = _dataflow_calls(reader)
    spellings = _op_spellings(reader, ops)
    elements = {e.name for e in ops.vocabulary.element_types}
    formats = []
    for element, raw in sorted(data["formats"].items()):
        if element not in elements:
            sink.error(doc.key_mark(("formats", element)), unknown_name("element type", element, sorted(elements)), after=[VOCABULARY])
        formats.append(Format(element, raw["name"], raw["tile_bytes"]))
    return SpellingModel(data["api"], tuple(formats), tuple(capacities), kernel, cb, dataflow, tuple(spellings), doc.source)
