"""Kernel specs (``ttlgen.kernel/v1``): dataflow buffers and a block-style body.

A kernel declares dataflow buffers (DFBs; an input DFB is fed from a DRAM tensor by the
reader, an output DFB is drained to one by the writer, a ``fill: scaler`` DFB is built in L1
by the reader as the scaler tile of the op that reads it, others are compute-internal) and
a body in TT-Lang's block style: ``loop``, ``if`` (on a loop variable), ``wait``/``pop``
(consumer), ``reserve``/``push`` (producer), ``store`` (overwrite) and ``accumulate``
(``+=``, packer L1 accumulation). Values are trees of tile ops named in the
``ttlgen.ops`` specs whose leaves are DFB names.

A kernel, in short::

    kernels:
      matmul_l1_acc:
        summary: ...
        target: blackhole          # a target of specs/targets/
        math_fidelity: HiFi4       # optional; the runtime API's default otherwise
        policy: {options: {fp32-dest-acc-en: disabled}, attributes: {}}   # resolver policy
        strict_f32_acc: false      # subblocking an accumulating 32-bit-DST '+=' is an error
        params: {k_tiles: 4, block: 2}     # integers usable for any count or shape
        dfbs:                      # index, element type, block in tiles, optional pages
          a: {index: 0, dtype: bf16, block: [block, 1], input: {shape: [block, k_tiles]}}
          b: {index: 1, dtype: bf16, block: [1, block], input: {shape: [k_tiles, block]}}
          out: {index: 16, dtype: bf16, block: [block, block], output: {shape: [block, block]}}
        body:
          - reserve: out
          - loop: {var: k, count: k_tiles, body: [
              {wait: [a, b]},
              {accumulate: {to: out, value: {op: tile_matmul_block, args: [a, b]}}},
              {pop: [a, b]}]}
          - push: out
        tolerance: {pcc: 0.999, max_rel: 2.0e-2, derivation: "..."}   # for `ttlgen run`

``max_rel`` bounds max|out - ref| / max|ref|; with ``relative_to: terms`` it bounds
max|out - ref| / max|ref(|inputs|)| instead, for sums whose result may cancel (RelativeTo).

This module parses and checks the structure (every reference, shape and count, each
with its spec position). The plan stage (:mod:`ttlgen.plan`) resolves each kernel's
configuration plan and lowers it to the kernel IR the emitter prints.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from ttlgen.errors import Diagnostic, DiagnosticSink, Entity, Mark, did_you_mean
from ttlgen.model import kernel_names
from ttlgen.model.math_spec import fp32
from ttlgen.model.ops import (
    VOCABULARY,
    OpSemantics,
    OpsModel,
    ResolverGeneration,
    op_entity,
    unknown_name,
)
from ttlgen.model.spelling import CPP_KEYWORDS, SpellingModel
from ttlgen.model.targets import Target, TargetsModel, facts_of
from ttlgen.resolver import ResolveFailure, normalize_policy
from ttlgen.resolver.policy import ATTRIBUTE_NAMES, OPTION_NAMES
from ttlgen.resolver.semantics import AutoSync, Generation, PolicyValues
from ttlgen.spec.document import SpecDocument

# The tile ops one stored value may hold. Real kernels store a few dozen; planning is linear
# in them but a 4096-op value takes about a second to plan (bench/kernel_size.py), and
# the DST holds at most 16 tiles of what such a tree keeps live.
OPS_PER_VALUE_LIMIT = 2048

KIND = "ttlgen.kernel"

# A DFB or loop variable becomes a C++ identifier of the generated kernels: it must not be
# a C++ keyword, a name the spelling spec introduces, or one the generator declares itself.
RESERVED_NAMES = CPP_KEYWORDS | kernel_names.GENERATED

# Tiles, pages and iterations are uint32_t in the generated kernels (the kernel API's type):
# a count, or a product of counts the kernels compute (a block's or a tensor's tiles), must
# fit in one.
COUNT_LIMIT = 2**32 - 1


def _double(raw: int | float) -> float:
    """A spec number as a double. YAML and TOML integers have no bound: one beyond a
    double's range becomes the infinity of its sign, which every caller refuses as no
    finite number (NaN and infinity written as such are refused before the model, by
    ttlgen/validate/numbers.py)."""
    try:
        return float(raw)
    except OverflowError:
        return math.inf if raw > 0 else -math.inf


def _shown(raw: int | float) -> str:
    """A number as a message shows it: a long integer by its first digits and length."""
    text = repr(raw)
    digits = text.lstrip("-")
    return text if len(digits) <= 24 else f"{text[: len(text) - len(digits) + 12]}... (an integer of {len(digits)} digits)"


@dataclass(frozen=True)
class Tensor:
    """The DRAM tensor that feeds (input) or drains (output) a DFB."""

    role: str  # "input" | "output"
    shape: tuple[int, int]  # tiles
    distribution: str  # inputs: normal | positive | ones | uniform
    bounds: tuple[float, float] | None = None  # uniform: the open interval values are drawn from


@dataclass(frozen=True)
class Dfb:
    """A dataflow buffer of a kernel: its CB index, element type, block and pages."""

    name: str
    index: int
    dtype: str
    block: tuple[int, int]  # tiles
    pages: int
    tensor: Tensor | None
    mark: Mark
    index_mark: Mark
    fill: str | None = None  # "scaler": the reader builds the tiles in L1 (no DRAM tensor)

    @property
    def block_tiles(self) -> int:
        return self.block[0] * self.block[1]


@dataclass(frozen=True)
class DfbRef:
    """A value read from a DFB's front block."""

    dfb: str
    mark: Mark


@dataclass(frozen=True)
class OpExpr:
    """An op applied to values, with its attributes and an optional pinned strategy."""

    id: str  # unique in the kernel, e.g. "op3"
    op: str
    args: tuple[Value, ...]
    attrs: tuple[tuple[str, str], ...]
    strategy: str | None
    mark: Mark

    def attr(self, name: str) -> str | None:
        return next((v for k, v in self.attrs if k == name), None)


Value = DfbRef | OpExpr


@dataclass(frozen=True)
class Sync:
    """wait / pop / reserve / push of one or more DFBs."""

    action: str
    dfbs: tuple[str, ...]
    mark: Mark


@dataclass(frozen=True)
class Store:
    """A store (or += accumulation) of a value into a DFB's reserved block."""

    target: str
    value: Value
    accumulate: bool
    mark: Mark


@dataclass(frozen=True)
class Loop:
    """A counted loop over a body."""

    var: str
    count: int
    body: tuple[Statement, ...]
    mark: Mark


@dataclass(frozen=True)
class If:
    """A body run on the first, last, not-first or not-last iteration of a loop."""

    var: str
    condition: str  # first | last | not_first | not_last
    then: tuple[Statement, ...]
    orelse: tuple[Statement, ...]
    mark: Mark


Statement = Sync | Store | Loop | If


class RelativeTo(Enum):
    """What a tolerance's ``max_rel`` divides the largest error by."""

    #: max|ref|: the result's own size.
    RESULT = "result"
    #: max|ref(|inputs|)|: the reference computed on the inputs' magnitudes. For a sum (a
    #: reduce, a matmul) that is the size of the terms, which its rounding errors scale
    #: with, while the result itself can cancel to near zero on some draws.
    TERMS = "terms"


@dataclass(frozen=True)
class Tolerance:
    """How close a device run must come to the float64 reference."""

    pcc: float
    max_rel: float
    relative_to: RelativeTo = RelativeTo.RESULT


@dataclass(frozen=True)
class Kernel:
    """One kernel spec: target, configuration, DFBs and the body of statements."""

    name: str
    summary: str
    target: str
    math_fidelity: str | None
    options: tuple[tuple[str, object], ...]
    attributes: tuple[tuple[str, object], ...]
    strict_f32_acc: bool
    accuracy_method: str | None
    params: tuple[tuple[str, int], ...]
    dfbs: tuple[Dfb, ...]
    body: tuple[Statement, ...]
    tolerance: Tolerance
    source: str
    mark: Mark
    target_mark: Mark

    def dfb(self, name: str) -> Dfb:
        return next(d for d in self.dfbs if d.name == name)


_VERBS = {"wait": "waits for", "pop": "pops", "reserve": "reserves", "push": "pushes"}
_SYNC_ACTIONS = ("reserve", "push", "wait", "pop")
# What the compute body does to a DFB by the role of its tensor (else all of _SYNC_ACTIONS).
_NEEDED_ACTIONS = {"input": ("wait", "pop"), "fill": ("wait", "pop"), "output": ("reserve", "push")}


@dataclass(frozen=True)
class KernelsModel:
    """Every kernel of the spec tree."""

    kernels: tuple[Kernel, ...]  # sorted by name


def walk_values(value: Value) -> Iterator[OpExpr]:
    """Op nodes of a value tree, operands before the op (evaluation order)."""
    if isinstance(value, OpExpr):
        for arg in value.args:
            yield from walk_values(arg)
        yield value


def walk_statements(body: Sequence[Statement], running: bool = False) -> Iterator[Statement]:
    """Every statement of ``body``, nested ones after their loop or condition; ``running``:
    not those in a loop of no iterations, which never run."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, Loop):
            if stmt.count > 0 or not running:
                yield from walk_statements(stmt.body, running)
        elif isinstance(stmt, If):
            yield from walk_statements(stmt.then, running)
            yield from walk_statements(stmt.orelse, running)


def _sync_actions(body: Sequence[Statement], running: bool) -> dict[str, set[str]]:
    """The actions the body's syncs take on each DFB (``running``: see walk_statements)."""
    found: dict[str, set[str]] = {}
    for stmt in walk_statements(body, running):
        if isinstance(stmt, Sync):
            for name in stmt.dfbs:
                found.setdefault(name, set()).add(stmt.action)
    return found


class _Builder:
    def __init__(
        self,
        doc: SpecDocument,
        name: str,
        raw: Mapping[str, object],
        ops: OpsModel,
        spelling: SpellingModel,
        sink: DiagnosticSink,
        overrides: Mapping[str, int],
    ) -> None:
        self.doc = doc
        self.name = name
        self.raw = raw
        self.ops = ops.by_name
        self.ops_model = ops
        self.element_names = [e.name for e in ops.vocabulary.element_types]
        self.spelling = spelling
        self.sink = sink
        self.base: tuple[str | int, ...] = ("kernels", name)
        raw_params = raw.get("params", {})
        assert isinstance(raw_params, dict)
        self.params = {k: int(overrides.get(k, v)) for k, v in raw_params.items()}
        for key, value in self.params.items():
            self.fits(value, f"parameter {key!r}", ("params", key))
        for key in overrides:
            if key not in self.params:
                sink.error(doc.key_mark(self.base), f"kernel {name!r} has no parameter {key!r}")
        self.dfbs: dict[str, Dfb] = {}
        self.synchronisation = Entity("synchronisation of kernel", f"{doc.display}:{name}")
        self.op_counter = 0
        self.reserved = RESERVED_NAMES | spelling.identifiers

    def mark(self, *path: str | int) -> Mark:
        return self.doc.mark((*self.base, *path))

    def op_sources(self) -> str:
        """The directories of the op families, for the message of an unknown op (made only
        then: every kernel of the tree is built with the same ops)."""
        return ", ".join(sorted({str(Path(op.source).parent) + "/" for op in self.ops_model.ops})) or "no ttlgen.ops spec yet"

    def fits(self, value: int, what: str, path: tuple[str | int, ...]) -> None:
        if value > COUNT_LIMIT:
            self.sink.error(self.mark(*path), f"{what} is {value}, more than {COUNT_LIMIT}: the generated kernels count in uint32_t")

    def tiles(self, shape: tuple[int, int], what: str, path: tuple[str | int, ...]) -> None:
        """A product of two counts: checked when each fits (else its own error says so)."""
        if shape[0] <= COUNT_LIMIT and shape[1] <= COUNT_LIMIT:
            self.fits(shape[0] * shape[1], f"the number of tiles of {what} ({shape[0]}x{shape[1]})", path)

    def count(self, raw: object, path: tuple[str | int, ...]) -> int:
        if isinstance(raw, int):
            self.fits(raw, "this count", path)
            return raw
        assert isinstance(raw, str)
        if raw not in self.params:
            if self.params:
                known = f"one of the kernel's parameters ({', '.join(sorted(self.params))})"
            else:
                known = "a parameter name (this kernel declares none)"
            self.sink.error(
                self.mark(*path), f"expected a count (a non-negative integer) or {known}, got {raw!r}{did_you_mean(raw, self.params)}"
            )
            return 1
        return self.params[raw]

    def shape(self, raw: object, path: tuple[str | int, ...]) -> tuple[int, int]:
        assert isinstance(raw, list)
        return (self.count(raw[0], (*path, 0)), self.count(raw[1], (*path, 1)))

    def build_dfbs(self) -> None:
        raw_dfbs = self.raw["dfbs"]
        assert isinstance(raw_dfbs, dict)
        indices: dict[int, str] = {}
        # Every identifier the generated kernels declare for a DFB, and the DFB it is for: two
        # DFBs whose derived names meet (`cb_y` and `y` both give `cb_y`) would redeclare it.
        declared: dict[str, str] = {}
        for dname, body in raw_dfbs.items():
            path = ("dfbs", dname)
            for ident in kernel_names.declared_for(dname):
                other = declared.setdefault(ident, dname)
                if other != dname:
                    self.sink.error(
                        self.doc.key_mark((*self.base, *path)),
                        f"the generated kernels would declare {ident!r} for both dataflow buffers {other!r} and {dname!r}; rename one of them",
                        notes=[Diagnostic(self.doc.key_mark((*self.base, "dfbs", other)), f"dataflow buffer {other!r} is declared here")],
                    )
                    break
            clash = next((n for n in kernel_names.declared_for(dname) if n in self.reserved), None)
            if clash == dname:
                self.sink.error(self.doc.key_mark((*self.base, *path)), f"{dname!r} is reserved in the generated C++; rename the dataflow buffer")
            elif clash is not None:
                self.sink.error(
                    self.doc.key_mark((*self.base, *path)),
                    f"the generated C++ would declare {clash!r} for {dname!r}, which the kernel API already names; rename the dataflow buffer",
                )
            if body["dtype"] not in self.element_names:
                self.sink.error(self.mark(*path, "dtype"), unknown_name("element type", body["dtype"], self.element_names), after=[VOCABULARY])
            if body["index"] in indices:
                self.sink.error(self.mark(*path, "index"), f"dataflow buffer index {body['index']} is already used by {indices[body['index']]!r}")
            indices[body["index"]] = dname
            block = self.shape(body["block"], (*path, "block"))
            self.tiles(block, "the block", (*path, "block"))
            tensor = None
            if "input" in body and "output" in body:
                self.sink.error(self.mark(*path), "a dataflow buffer is fed from an input tensor or drained to an output tensor, not both")
            if "fill" in body and ("input" in body or "output" in body):
                self.sink.error(
                    self.mark(*path, "fill"),
                    "a dataflow buffer the reader fills in L1 has no DRAM tensor; drop its input or output, or the fill",
                )
            for role in ("input", "output"):
                if role in body:
                    shape = self.shape(body[role]["shape"], (*path, role, "shape"))
                    self.tiles(shape, "the tensor", (*path, role, "shape"))
                    if shape[0] % block[0] or shape[1] % block[1]:
                        self.sink.error(
                            self.mark(*path, role, "shape"),
                            f"tensor of {shape[0]}x{shape[1]} tiles is not a whole number of {block[0]}x{block[1]} blocks",
                        )
                    tensor = self.tensor(role, shape, body[role].get("distribution", "normal"), (*path, role, "distribution"))
            pages = body.get("pages", 2 * block[0] * block[1])
            if "pages" in body:
                self.fits(pages, "the number of pages", (*path, "pages"))
            elif block[0] * block[1] <= COUNT_LIMIT:
                self.fits(pages, "the default number of pages (two blocks)", (*path, "block"))
            if pages < block[0] * block[1]:
                self.sink.error(self.mark(*path, "pages"), f"{pages} pages cannot hold one block of {block[0] * block[1]} tiles")
            self.dfbs[dname] = Dfb(
                dname, body["index"], body["dtype"], block, pages, tensor,
                self.doc.key_mark((*self.base, *path)), self.mark(*path, "index"), body.get("fill"),
            )

    def tensor(self, role: str, shape: tuple[int, int], raw: object, path: tuple[str | int, ...]) -> Tensor:
        if not isinstance(raw, dict):
            return Tensor(role, shape, str(raw))
        # The inputs are drawn as fp32 (and stored in a format of fp32's range): a bound
        # beyond it would make inputs of infinity, and the draw itself needs high - low finite.
        outside = [i for i, bound in enumerate(raw["uniform"]) if not math.isfinite(fp32(_double(bound)))]
        for i in outside:
            self.sink.error(
                self.mark(*path, "uniform", i),
                f"uniform bound {_shown(raw['uniform'][i])} is no finite fp32 number (|value| < 3.4028235e38): the inputs are drawn as fp32",
            )
        if outside:
            return Tensor(role, shape, "uniform", None)
        low, high = (float(v) for v in raw["uniform"])
        if not low < high:
            self.sink.error(self.mark(*path, "uniform"), f"uniform inputs need a lower bound below the upper one, got [{low:g}, {high:g}]")
        return Tensor(role, shape, "uniform", (low, high))

    def dfb_ref(self, name: str, path: tuple[str | int, ...], breaks: Sequence[Entity] = ()) -> bool:
        if name in self.dfbs:
            return True
        known = ", ".join(sorted(self.dfbs)) or "none"
        self.sink.error(
            self.mark(*path), f"unknown dataflow buffer {name!r}; declared: {known}{did_you_mean(name, self.dfbs)}", breaks=breaks
        )
        return False

    def value(self, raw: object, path: tuple[str | int, ...]) -> Value:
        if isinstance(raw, str):
            self.dfb_ref(raw, path)
            return DfbRef(raw, self.mark(*path))
        assert isinstance(raw, dict)
        op_name = raw["op"]
        op = self.ops.get(op_name)
        args = tuple(self.value(a, (*path, "args", i)) for i, a in enumerate(raw["args"]))
        self.op_counter += 1
        floats = op.float_attributes if op is not None else ()
        expr = OpExpr(
            id=f"op{self.op_counter}",
            op=op_name,
            args=args,
            attrs=tuple(
                sorted((k, self.float_attribute(op_name, k, v, (*path, "attrs", k)) if k in floats else str(v)) for k, v in raw.get("attrs", {}).items())
            ),
            strategy=raw.get("strategy"),
            mark=self.mark(*path, "op"),
        )
        if op is None:
            self.sink.error(
                self.mark(*path, "op"),
                f"unknown op {op_name!r}: no ttlgen.ops spec declares it{did_you_mean(op_name, self.ops)}; "
                f"`ttlgen new op {op_name}` adds it to an op family ({self.op_sources()})",
            )
            return expr
        self.check_op(expr, op, path)
        return expr

    def float_attribute(self, op: str, key: str, raw: object, path: tuple[str | int, ...]) -> str:
        """A number attribute's value as the op holds it (TT-Lang's F32Attr): the nearest
        fp32, written so that ``float()`` reads it back exactly; a value that is no finite
        fp32 number is a located error (and kept as written)."""
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            self.sink.error(self.mark(*path), f"attribute {key!r} of op {op!r} is a number (an fp32 value, e.g. 0.5), not {raw!r}")
            return str(raw)
        single = fp32(_double(raw))
        if not math.isfinite(single):
            self.sink.error(self.mark(*path), f"attribute {key!r} of op {op!r} is {_shown(raw)}, which is no finite fp32 number (|value| < 3.4028235e38)")
            return str(raw)
        return repr(single)

    def max_rel(self, raw: int | float) -> float:
        """The tolerance's relative error bound (the schema holds it above 0 and pcc in
        [0, 1]); one no double holds is a located error."""
        value = _double(raw)
        if not math.isfinite(value):
            self.sink.error(
                self.mark("tolerance", "max_rel"),
                f"max_rel {_shown(raw)} is beyond the range of a double (at most {sys.float_info.max:.17g})",
            )
        return value

    def check_op(self, expr: OpExpr, op: OpSemantics, path: tuple[str | int, ...]) -> None:
        # Operand counts, attributes and spellings come from the op's family: if the family
        # is wrong, these checks follow from its error.
        after = [op_entity(op.name)]
        data = op.tile_operands
        required = [i for i in data if not op.operands[i].optional]
        if not len(required) <= len(expr.args) <= len(data):
            want = f"{len(required)}" if len(required) == len(data) else f"{len(required)} to {len(data)}"
            self.sink.error(self.mark(*path, "args"), f"op {op.name!r} takes {want} tile operands, got {len(expr.args)}", after=after)
        attributes = op.attributes  # computed by the property
        for attr in attributes:
            if expr.attr(attr) is None:
                self.sink.error(self.mark(*path), f"op {op.name!r} needs attribute {attr!r}", after=after)
        for key, value in expr.attrs:
            if key not in attributes:
                self.sink.error(
                    self.mark(*path, "attrs", key),
                    f"op {op.name!r} has no attribute {key!r}; attributes: {', '.join(attributes) or 'none'}{did_you_mean(key, attributes)}",
                    after=after,
                )
                continue
            values = op.attribute_values(key)
            if key == op.result_element_attribute:
                values = tuple(self.element_names)
            if values is not None and value not in values:
                self.sink.error(
                    self.mark(*path, "attrs", key),
                    f"attribute {key!r} of op {op.name!r} is {value!r}; values: {', '.join(values)}{did_you_mean(value, values)}",
                    after=after,
                )
        if self.spelling.levels:
            keys = op.spelling_keys
            missing = [key for key in keys if not self.spelling.has_spelling(op.name, key)]
            if missing:
                where = " and ".join(f"ops.{op.name}.{key}" for key in missing)
                self.sink.error(
                    self.mark(*path, "op"),
                    f"op {op.name!r} has no tt-metal spelling: add its init and call under {where} in {self.spelling.source} "
                    "(or absent: why the API has no function for it)",
                    after=after,
                )

    def statements(self, raw: object, path: tuple[str | int, ...], loop_vars: tuple[str, ...]) -> tuple[Statement, ...]:
        assert isinstance(raw, list)
        out: list[Statement] = []
        for i, item in enumerate(raw):
            spath = (*path, i)
            ((key, body),) = item.items()
            mark = self.doc.key_mark((*self.base, *spath, key))
            if key in ("wait", "pop", "reserve", "push"):
                names = (body,) if isinstance(body, str) else tuple(body)
                for j, n in enumerate(names):
                    where = (*spath, key) if isinstance(body, str) else (*spath, key, j)
                    if n in names[:j]:
                        self.sink.error(self.mark(*where), f"{n!r} is listed twice; {key} each dataflow buffer once")
                        continue
                    if not self.dfb_ref(n, where, breaks=[self.synchronisation]):
                        continue
                    tensor = self.dfbs[n].tensor
                    if tensor is not None and tensor.role == "input" and key in ("reserve", "push"):
                        self.sink.error(self.mark(*where), f"{n!r} is fed from an input tensor by the reader; the compute kernel only waits for and pops it")
                    if self.dfbs[n].fill is not None and key in ("reserve", "push"):
                        self.sink.error(self.mark(*where), f"{n!r} is filled by the reader; the compute kernel only waits for and pops it")
                    if tensor is not None and tensor.role == "output" and key in ("wait", "pop"):
                        self.sink.error(self.mark(*where), f"{n!r} is drained to an output tensor by the writer; the compute kernel only reserves and pushes it")
                out.append(Sync(key, names, mark))
            elif key in ("store", "accumulate"):
                self.dfb_ref(body["to"], (*spath, key, "to"))
                before = self.op_counter
                value = self.value(body["value"], (*spath, key, "value"))
                if (ops := self.op_counter - before) > OPS_PER_VALUE_LIMIT:
                    self.sink.error(
                        self.mark(*spath, key, "value"),
                        f"this value holds {ops} tile ops, more than the {OPS_PER_VALUE_LIMIT} one {key} may hold; "
                        "split it into stores through intermediate dataflow buffers",
                    )
                out.append(Store(body["to"], value, key == "accumulate", mark))
            elif key == "loop":
                var = body["var"]
                if var in loop_vars:
                    self.sink.error(self.mark(*spath, key, "var"), f"loop variable {var!r} shadows an enclosing loop's")
                if var.endswith("_"):
                    self.sink.error(self.mark(*spath, key, "var"), "loop variables ending in '_' are reserved for generated loops")
                clashes = {n for d in self.dfbs for n in kernel_names.declared_for(d)}
                if var in self.reserved or var in clashes:
                    self.sink.error(self.mark(*spath, key, "var"), f"loop variable {var!r} clashes with a name of the generated C++")
                count = self.count(body["count"], (*spath, key, "count"))
                inner = self.statements(body["body"], (*spath, key, "body"), (*loop_vars, var))
                out.append(Loop(var, count, inner, mark))
            else:
                var = body["var"]
                if var not in loop_vars:
                    self.sink.error(self.mark(*spath, key, "var"), f"{var!r} is not the variable of an enclosing loop")
                then = self.statements(body["then"], (*spath, key, "then"), loop_vars)
                orelse = self.statements(body.get("else", []), (*spath, key, "else"), loop_vars)
                out.append(If(var, body["is"], then, orelse, mark))
        return tuple(out)

    def check_tensor_protocol(self, body: Sequence[Statement]) -> None:
        """The reader fills each input DFB and the writer drains each output DFB until the
        tensor is done, and compute alone produces and consumes any other: a body that
        leaves out a side stalls the kernel."""
        used = _sync_actions(body, running=True)
        for dfb in self.dfbs.values():
            role = dfb.tensor.role if dfb.tensor is not None else ("fill" if dfb.fill is not None else None)
            needed = _NEEDED_ACTIONS.get(role or "", _SYNC_ACTIONS)
            missing = [action for action in needed if action not in used.get(dfb.name, set())]
            if missing:
                anywhere = _sync_actions(body, running=False)  # loops of no iterations too
                fed = {
                    "input": "fed from an input tensor by the reader",
                    "fill": "filled by the reader",
                    "output": "drained to an output tensor by the writer",
                }.get(role or "", "neither fed nor drained by the reader or writer (compute both produces and consumes it)")
                # The reader and writer move nothing for a loop of no iterations either, so
                # a tensor synchronised only there is never moved.
                dead = [action for action in missing if action in anywhere.get(dfb.name, set())]
                never_runs = f": its {' and '.join(dead)} {'is' if len(dead) == 1 else 'are'} only in a loop of 0 iterations, which never runs" if dead else ""
                self.sink.error(
                    dfb.mark,
                    f"{dfb.name!r} is {fed}, but the compute body never {' or '.join(_VERBS[m] for m in missing)} it{never_runs}",
                    after=[self.synchronisation],  # a misspelt buffer in a wait or push explains it
                )

    def build(self) -> Kernel:
        raw = self.raw
        self.build_dfbs()
        body = self.statements(raw["body"], ("body",), ())
        self.check_tensor_protocol(body)
        tol = raw["tolerance"]
        assert isinstance(tol, dict)
        policy = raw.get("policy", {})
        assert isinstance(policy, dict)
        return Kernel(
            name=self.name,
            summary=str(raw["summary"]),
            target=str(raw["target"]),
            math_fidelity=raw.get("math_fidelity"),  # type: ignore[arg-type]
            options=tuple(sorted(policy.get("options", {}).items())),
            attributes=tuple(sorted(policy.get("attributes", {}).items())),
            strict_f32_acc=bool(raw.get("strict_f32_acc", False)),
            accuracy_method=raw.get("accuracy_method"),  # type: ignore[arg-type]
            params=tuple(sorted(self.params.items())),
            dfbs=tuple(sorted(self.dfbs.values(), key=lambda d: d.index)),
            body=body,
            tolerance=Tolerance(
                float(tol["pcc"]), self.max_rel(tol["max_rel"]), RelativeTo(tol.get("relative_to", RelativeTo.RESULT.value))
            ),
            source=self.doc.source,
            mark=self.doc.key_mark(self.base),
            target_mark=self.mark("target"),
        )


def build_kernel(
    doc: SpecDocument,
    name: str,
    ops: OpsModel,
    spelling: SpellingModel,
    sink: DiagnosticSink,
    overrides: Mapping[str, int] | None = None,
) -> Kernel:
    """One kernel of a document, with optional parameter overrides (used by `accuracy`)."""
    return _Builder(doc, name, doc.data["kernels"][name], ops, spelling, sink, overrides or {}).build()


def _check_dfb_indices(kernel: Kernel, target: Target, sink: DiagnosticSink) -> None:
    """Every buffer is a circular buffer of the target, not only those an op reads (which the
    resolver checks): TT-Lang's words for the same condition."""
    for dfb in kernel.dfbs:
        if dfb.index >= target.dfb_capacity:
            sink.error(
                dfb.index_mark,
                f"uses dataflow buffer index {dfb.index} outside the supported range [0, {target.dfb_capacity - 1}] "
                f"of target {target.name!r}",
                after=facts_of(target),
            )


_POLICY_NAMES = {"options": ("pass option", OPTION_NAMES), "attributes": ("function attribute", ATTRIBUTE_NAMES)}


def _check_policy(doc: SpecDocument, name: str, generation: ResolverGeneration | None, sink: DiagnosticSink) -> None:
    """Each option and attribute of the kernel's policy, as the resolver reads it, reported
    at its own key or value: the resolver's diagnostics name no place in the spec (it would
    be reported at the kernel). The names and values are the resolver's; each entry is
    normalized alone, so a message is about that entry only. ``generation``: the target's,
    which decides whether attribute values must have their type (None: the target is
    unknown, so only what no generation accepts is reported)."""
    policy = doc.data["kernels"][name].get("policy", {})
    resolver_generation = (
        Generation(generation.name, generation.summary, AutoSync(generation.auto_sync), PolicyValues(generation.policy_values))
        if generation is not None
        else None
    )
    for section, (what, names) in _POLICY_NAMES.items():
        for key, value in policy.get(section, {}).items():
            path = ("kernels", name, "policy", section, key)
            if key not in names:
                sink.error(doc.key_mark(path), f"unknown {what} {key!r}; known: {', '.join(names)}{did_you_mean(key, names)}")
                continue
            entry = {key: value}
            if section == "options":
                found = normalize_policy(entry, None, resolver_generation)
            else:
                found = normalize_policy(None, entry, resolver_generation)
            if isinstance(found, ResolveFailure):
                for error in found.errors:
                    sink.error(doc.mark(path), error.message)


def build(
    documents: Sequence[SpecDocument], sink: DiagnosticSink, ops: OpsModel, spelling: SpellingModel, targets: TargetsModel
) -> KernelsModel:
    kernels: dict[str, Kernel] = {}
    by_name = {t.name: t for t in targets.targets}
    target_names = list(by_name)
    for doc in documents:
        if doc.kind != KIND:
            continue
        for name in doc.data["kernels"]:
            kernel = build_kernel(doc, name, ops, spelling, sink)
            target = by_name.get(kernel.target)
            if target is None:
                sink.error(
                    kernel.target_mark,
                    f"unknown target {kernel.target!r}; targets: {', '.join(target_names) or 'none'}{did_you_mean(kernel.target, target_names)}",
                )
            elif target.rejected is None:
                _check_dfb_indices(kernel, target, sink)
            _check_policy(doc, name, ops.vocabulary.generation(target.generation) if target is not None else None, sink)
            if name in kernels:
                sink.error(kernel.mark, f"kernel {name!r} is declared twice (first at {kernels[name].mark})")
                continue
            kernels[name] = kernel
    return KernelsModel(tuple(kernels[n] for n in sorted(kernels)))
