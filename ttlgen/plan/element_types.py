"""The element type of every sub-expression of a kernel's values.

The configuration resolver decides DST width and unpack modes from the element type each
tile op produces, so each op must be described with the type it really computes, not the
type of the buffer its value is finally stored to. The rule, from the op semantics
(``ttlgen.ops``: an op's data operands and whether it has a result) and the vocabulary
(``ttlgen.op_vocabulary``: each element type's width):

* A dataflow-buffer operand has the buffer's element type.
* An op with a result has the type of its widest data operand (by ``bits``); among
  equally wide operands, the first one's. Every shipped op produces values of its inputs'
  type: a copy, broadcast, transpose or reduce moves or combines elements of its input,
  and an arithmetic op of a 16-bit and a 32-bit operand computes at 32 bits, because the
  32-bit operand reaches the math engine at full width (the target's rules demand 32-bit
  DST for it) and is not narrowed to combine it with the 16-bit one. With operands of one
  type this is the resolver's own default (``ttlgen resolve`` without ``result``).
* An op without data operands has no type of its own; it takes the type of the buffer the
  enclosing store writes.
* An op whose family names a ``result_element`` attribute (a typecast) has the element
  type that attribute gives, whatever its operands'.
* A store of a bare buffer (``store: {to: out, value: x}``) is a copy, of the source's type.
* A store converts its value to the target buffer's type in the packer; it widens nothing.

So ``out(f32) = tile_add(tile_bcast(x: bf16), y: f32)`` is a bf16 broadcast feeding an
f32 add, which is what the resolver must see to reject it on a target whose broadcast
data mover is 16 bits wide.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ttlgen.errors import DiagnosticSink
from ttlgen.model.kernels import DfbRef, Kernel, OpExpr, Store, Value, walk_statements, walk_values
from ttlgen.model.ops import OpSemantics, OpsModel, Route


@dataclass(frozen=True)
class ValueTypes:
    """Element type (a vocabulary name) of each op of a kernel, by op id."""

    ops: Mapping[str, str | None]  # op id -> result type (None: the op has no result)

    def of(self, expr: OpExpr) -> str | None:
        return self.ops.get(expr.id)


def copy_op(ops: OpsModel) -> OpSemantics | None:
    """The op a store of a bare dataflow buffer performs: the Copy primitive reading a DFB."""
    for op in ops.ops:
        routes = op.strategies[0].routes if op.strategies else ()
        if op.primitive.fixed == "Copy" and op.has_result and routes and routes[0] is Route.DFB:
            return op
    return None


class _Inference:
    def __init__(self, kernel: Kernel, ops: OpsModel) -> None:
        self.kernel = kernel
        self.semantics: Mapping[str, OpSemantics] = {op.name: op for op in ops.ops}
        self.bits = {e.name: e.bits for e in ops.vocabulary.element_types}
        self.dtypes = {d.name: d.dtype for d in kernel.dfbs}
        self.results: dict[str, str | None] = {}

    def value(self, value: Value, context: str | None) -> str | None:
        if isinstance(value, DfbRef):
            return self.dtypes.get(value.dfb)
        operands = [self.value(arg, context) for arg in value.args]
        op = self.semantics.get(value.op)
        result: str | None
        if op is not None and not op.has_result:
            result = None
        elif op is not None and op.result_element_attribute is not None and value.attr(op.result_element_attribute) in self.bits:
            result = value.attr(op.result_element_attribute)
        else:
            typed = [t for t in operands if t is not None and t in self.bits]
            result = max(typed, key=lambda t: self.bits[t]) if typed else context
        self.results[value.id] = result
        return result


def infer(kernel: Kernel, ops: OpsModel) -> ValueTypes:
    """The element type of every op of ``kernel``'s stores (see the module's rule)."""
    inference = _Inference(kernel, ops)
    for stmt in walk_statements(kernel.body):
        if isinstance(stmt, Store):
            inference.value(stmt.value, inference.dtypes.get(stmt.target))
    return ValueTypes(dict(sorted(inference.results.items())))


def check_elements(kernel: Kernel, ops: OpsModel, types: ValueTypes, sink: DiagnosticSink) -> None:
    """Every op of an op family that states its element types (``elements``) computes on
    them: each data operand and the result. TT-Lang's words for the row normalization:
    "supports bf16 tiles only"."""
    semantics = {op.name: op for op in ops.ops}
    dtypes = {d.name: d.dtype for d in kernel.dfbs}
    for stmt in walk_statements(kernel.body):
        if not isinstance(stmt, Store):
            continue
        for expr in walk_values(stmt.value):
            op = semantics.get(expr.op)
            if op is None or not op.elements:
                continue
            found = [dtypes.get(a.dfb) if isinstance(a, DfbRef) else types.of(a) for a in expr.args]
            found.append(types.of(expr))
            wrong = sorted({t for t in found if t is not None and t not in op.elements})
            if wrong:
                only = ", ".join(op.elements)
                sink.error(
                    expr.mark,
                    f"op {expr.op!r} supports {only} tiles only, here it computes on {', '.join(wrong)} "
                    f"(its elements: {op.mark.file}, family {op.family!r})",
                )
