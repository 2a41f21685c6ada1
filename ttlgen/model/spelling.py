"""How tile ops are spelled in tt-metal compute-kernel code (``ttlgen.op_spelling/v1``).

One spelling file declares the kernel-level calls (hardware init, data-format
reconfiguration, copy, pack, packer L1 accumulation), DST capacity per destination width
and sync mode, and per op and strategy the include, init call and call with
``{placeholders}``. Ops are referenced by the names of the ``ttlgen.ops`` specs; a
reference to an unknown op, strategy, operand or attribute is a located error.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass

from ttlgen.errors import DiagnosticSink, Mark
from ttlgen.model.ops import OpSemantics, OpsModel, Route
from ttlgen.spec.document import SpecDocument

KIND = "ttlgen.op_spelling"
FIXED = "fixed"
_PLACEHOLDER_ROOTS = {"dst", "pack", "rt", "ct", "kt"}


@dataclass(frozen=True)
class Spelling:
    """One way to emit an op: its header, init call and call, with placeholders."""

    op: str
    strategy: str  # a strategy name, or "fixed"
    include: str
    init: str
    call: str
    uninit: str | None
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


@dataclass(frozen=True)
class KernelCalls:
    include: str
    init_include: str
    init: str
    reconfig_srca: str
    reconfig_srcb: str
    reconfig_pack: str
    copy_include: str
    copy_init: str
    copy: str
    pack: str
    l1_acc: str


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


EMPTY = SpellingModel("", (), (), None, (), "")


def placeholders(template: str) -> list[str]:
    return [field for _, field, _, _ in string.Formatter().parse(template) if field]


def fill(template: str, values: dict[str, str]) -> str:
    """Replace ``{name}`` placeholders; every placeholder must have a value."""
    return re.sub(r"\{([A-Za-z0-9_.]+)\}", lambda m: values[m.group(1)], template)


def _check_placeholders(
    doc: SpecDocument, path: tuple[str | int, ...], text: str, op: OpSemantics | None, attrs: set[str], sink: DiagnosticSink
) -> None:
    operand_names = {o.name for o in op.operands} if op else set()
    for field in re.findall(r"\{([^{}]*)\}", text):
        root, _, leaf = field.partition(".")
        if op is None:
            continue
        if root in _PLACEHOLDER_ROOTS and not leaf:
            continue
        if root == "attr" and leaf in attrs:
            continue
        if root in operand_names and leaf in ("cb", "tile", "dst"):
            continue
        sink.error(doc.mark(path), f"unknown placeholder {{{field}}} for op {op.name!r}; operands: {', '.join(sorted(operand_names)) or 'none'}")


def build(documents: Sequence[SpecDocument], sink: DiagnosticSink, ops: OpsModel) -> SpellingModel:
    docs = [d for d in documents if d.kind == KIND]
    if not docs:
        return EMPTY
    for extra in docs[1:]:
        sink.error(extra.mark(("spec",)), f"a second {KIND} file; spellings are declared once (first: {docs[0].file})")
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
    k = data["kernel"]
    kernel = KernelCalls(
        include=k["include"],
        init_include=k["init"]["include"],
        init=k["init"]["call"],
        reconfig_srca=k["reconfig_srca"],
        reconfig_srcb=k["reconfig_srcb"],
        reconfig_pack=k["reconfig_pack"],
        copy_include=k["copy"]["include"],
        copy_init=k["copy"]["init"],
        copy=k["copy"]["call"],
        pack=k["pack"],
        l1_acc=k["l1_acc"],
    )
    by_name = {op.name: op for op in ops.ops}
    strategy_names = {s.name for s in ops.vocabulary.strategies}
    spellings: list[Spelling] = []
    for op_name, per_strategy in data["ops"].items():
        op = by_name.get(op_name)
        if op is None:
            sink.error(doc.key_mark(("ops", op_name)), f"unknown op {op_name!r}: no ttlgen.ops spec declares it")
        for strategy, raw in per_strategy.items():
            path: tuple[str | int, ...] = ("ops", op_name, strategy)
            if op is not None:
                declared = [s.name for s in op.strategies]
                if op.fixed and strategy != FIXED:
                    sink.error(doc.key_mark(path), f"op {op_name!r} has fixed execution semantics; spell it under 'fixed'")
                elif not op.fixed and strategy not in declared:
                    known = ", ".join(str(s) for s in declared)
                    what = "is not a strategy" if strategy not in strategy_names else "is not a strategy of this op"
                    sink.error(doc.key_mark(path), f"{strategy!r} {what}; op {op_name!r} has: {known}")
            operands = {o.name for o in op.operands} if op else set()
            for reg in ("srca", "srcb"):
                operand = raw.get("unpack", {}).get(reg)
                if op is not None and operand is not None and operand not in operands:
                    sink.error(doc.mark((*path, "unpack", reg)), f"unknown operand {operand!r} of op {op_name!r}; operands: {', '.join(sorted(operands))}")
                elif op is not None and operand is not None:
                    strategy_sem = next((s for s in op.strategies if (s.name or FIXED) == strategy), None)
                    index = [o.name for o in op.operands].index(operand)
                    if strategy_sem is not None and strategy_sem.routes[index] is not Route.DFB:
                        sink.error(
                            doc.mark((*path, "unpack", reg)),
                            f"operand {operand!r} of op {op_name!r} is routed to {strategy_sem.routes[index].value} "
                            f"in the {strategy} strategy; only dataflow-buffer operands are unpacked",
                        )
            attrs = {a for a in raw.get("attributes", {})}
            for field_name in ("init", "call"):
                _check_placeholders(doc, (*path, field_name), raw[field_name], op, attrs, sink)
            spellings.append(
                Spelling(
                    op=op_name,
                    strategy=strategy,
                    include=raw["include"],
                    init=raw["init"],
                    call=raw["call"],
                    uninit=raw.get("uninit"),
                    unpack_srca=raw.get("unpack", {}).get("srca"),
                    unpack_srcb=raw.get("unpack", {}).get("srcb"),
                    attributes=tuple(
                        (name, tuple(values.items())) for name, values in sorted(raw.get("attributes", {}).items())
                    ),
                    accumulates_in_dst=bool(raw.get("accumulates_in_dst", False)),
                    mark=doc.key_mark(path),
                )
            )
    elements = {e.name for e in ops.vocabulary.element_types}
    formats = []
    for element, raw in sorted(data["formats"].items()):
        if element not in elements:
            sink.error(doc.key_mark(("formats", element)), f"unknown element type {element!r}; declared: {', '.join(sorted(elements))}")
        formats.append(Format(element, raw["name"], raw["tile_bytes"]))
    return SpellingModel(data["api"], tuple(formats), tuple(capacities), kernel, tuple(spellings), doc.file)
