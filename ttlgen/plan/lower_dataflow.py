"""Lower a kernel's body to its reader and writer programs of the kernel IR.

The reader and writer mirror the body's loops and conditions: each ``wait`` of an input
DFB reads its tensor's next block, each ``push`` of an output DFB writes the next block
(blocks in row-major order over the tensor, wrapping around). A block moves through a
helper function of the program that reserves (or waits for) the block in the CB and moves
it tile by tile, one DRAM page per tile, through the tensor's accessor.

A tensor's accessor is built at the top of the entry point, the way the level's spelling
says: brace-initialised from its runtime-argument address, tile size and data format, or
constructed from compile-time accessor arguments (the first tensor's at offset 0, each
next one's where the previous one's end), the address and the tile size; the program then
records which buffers' accessor arguments its compile-time arguments hold. Every call comes
from the spelling spec's ``cb`` and ``dataflow`` forms, which the spelling model allows
exactly the placeholders bound here (so binding cannot fail).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ttlgen.model import kernel_names
from ttlgen.model.kernels import Dfb, If, Kernel, Loop, Statement, Sync
from ttlgen.model.spelling import ArgKind, BracedAccessor, CbCalls, DataflowCalls, GeneratorField
from ttlgen.model.tt_metal_api import EntryPoint
from ttlgen.plan import kernel_ir as ir
from ttlgen.plan.kernel_ir import Binary, BinaryOp, Bits, CallValue, Const, Expr, Step, Stmt, Var
from ttlgen.plan.lower_compute import condition
from ttlgen.plan.scaler_fill import Fill

U32 = ir.Scalar.U32
ADDRESS_GENERATOR = ir.TypeParam("AddrGen")


def move_block(df: DataflowCalls, cbs: CbCalls, reading: bool) -> ir.Function:
    """``read_block``/``write_block``: one block between its CB and its place in the tensor."""
    v = Var
    tiles = Binary(BinaryOp.MUL, v("block_rows"), v("block_cols"))
    cb: dict[str, Expr] = {"cb": v("cb")}
    page = Binary(
        BinaryOp.ADD,
        Binary(BinaryOp.ADD, Binary(BinaryOp.MUL, Binary(BinaryOp.ADD, v("row0"), v("r")), v("tensor_cols")), v("col0")),
        v("c"),
    )
    move: dict[str, Expr] = {"page": page, "accessor": v("gen"), "l1": v("l1")}
    if reading:
        claim = ir.bind(Step.CB_RESERVE_BACK, cbs.reserve_back, {**cb, "tiles": tiles})
        l1 = ir.bind(Step.WRITE_PTR, df.write_ptr, cb)
        transfer = ir.bind(Step.READ_PAGE, df.read_page, move)
        barrier = ir.bind(Step.READ_BARRIER, df.read_barrier, {})
        hand_over = ir.bind(Step.CB_PUSH_BACK, cbs.push_back, {**cb, "tiles": tiles})
    else:
        claim = ir.bind(Step.CB_WAIT_FRONT, cbs.wait_front, {**cb, "tiles": tiles})
        l1 = ir.bind(Step.READ_PTR, df.read_ptr, cb)
        transfer = ir.bind(Step.WRITE_PAGE, df.write_page, move)
        barrier = ir.bind(Step.WRITE_BARRIER, df.write_barrier, {})
        hand_over = ir.bind(Step.CB_POP_FRONT, cbs.pop_front, {**cb, "tiles": tiles})
    params = (
        ir.Param("cb", U32),
        ir.Param("gen", ADDRESS_GENERATOR),
        *(ir.Param(name, U32) for name in ("block", "block_rows", "block_cols", "tensor_rows", "tensor_cols")),
    )

    def const(name: str, value: Expr) -> ir.Declare:
        return ir.Declare(name, U32, value, ir.Storage.CONST)

    body: tuple[Stmt, ...] = (
        const("grid_cols", Binary(BinaryOp.DIV, v("tensor_cols"), v("block_cols"))),
        const("b", Binary(BinaryOp.MOD, v("block"), Binary(BinaryOp.MUL, Binary(BinaryOp.DIV, v("tensor_rows"), v("block_rows")), v("grid_cols")))),
        const("row0", Binary(BinaryOp.MUL, Binary(BinaryOp.DIV, v("b"), v("grid_cols")), v("block_rows"))),
        const("col0", Binary(BinaryOp.MUL, Binary(BinaryOp.MOD, v("b"), v("grid_cols")), v("block_cols"))),
        const("page_bytes", CallValue(ir.bind(Step.TILE_SIZE, df.tile_size, cb))),
        claim,
        ir.Declare("l1", U32, CallValue(l1), ir.Storage.MUTABLE),
        ir.For(
            "r",
            v("block_rows"),
            (ir.For("c", v("block_cols"), (transfer, ir.AddTo("l1", v("page_bytes"))), generated=False),),
            generated=False,
        ),
        barrier,
        hand_over,
    )
    return ir.Function(kernel_names.READ_BLOCK if reading else kernel_names.WRITE_BLOCK, params, body)


def fill_face_rows(df: DataflowCalls, cbs: CbCalls) -> ir.Function:
    """``fill_face_rows``: a block of tiles built in L1 (a reduce scaler, :mod:`ttlgen.plan.
    scaler_fill`): every word zero, then the first row of each face set to ``word``."""
    v = Var
    cb: dict[str, Expr] = {"cb": v("cb")}
    words = "words"
    tile_start, face_start = Binary(BinaryOp.MUL, v("t"), v("tile_words")), Binary(BinaryOp.MUL, v("f"), v("face_words"))
    at = Binary(BinaryOp.ADD, Binary(BinaryOp.ADD, tile_start, face_start), v("w"))
    body: tuple[Stmt, ...] = (
        ir.bind(Step.CB_RESERVE_BACK, cbs.reserve_back, {**cb, "tiles": v("tiles")}),
        ir.Declare(words, ir.Words(U32), CallValue(ir.bind(Step.WRITE_PTR, df.write_ptr, cb)), ir.Storage.MUTABLE),
        ir.For("w", Binary(BinaryOp.MUL, v("tiles"), v("tile_words")), (ir.StoreWord(words, v("w"), Const(0)),), generated=False),
        ir.For(
            "t",
            v("tiles"),
            (ir.For("f", v("faces"), (ir.For("w", v("row_words"), (ir.StoreWord(words, at, v("word")),), generated=False),), generated=False),),
            generated=False,
        ),
        ir.bind(Step.CB_PUSH_BACK, cbs.push_back, {**cb, "tiles": v("tiles")}),
    )
    params = tuple(ir.Param(name, U32) for name in ("cb", "tiles", "tile_words", "faces", "face_words", "row_words", "word"))
    return ir.Function(kernel_names.FILL_FACE_ROWS, params, body)


def _accessor(df: DataflowCalls, dfb: Dfb, arg: int, previous_args: str | None) -> list[Stmt]:
    """The declarations that build the accessor of ``dfb``'s tensor (runtime argument ``arg``)."""
    cb = Var(kernel_names.cb(dfb.name))
    address = CallValue(ir.bind(Step.RUNTIME_ARG, df.runtime_arg, {"index": Const(arg)}))
    page_size = CallValue(ir.bind(Step.TILE_SIZE, df.tile_size, {"cb": cb}))
    name = kernel_names.tensor(dfb.name)
    accessor = df.accessor
    if isinstance(accessor, BracedAccessor):
        value = {
            GeneratorField.ADDRESS: address,
            GeneratorField.PAGE_SIZE: page_size,
            GeneratorField.DATA_FORMAT: CallValue(ir.bind(Step.DATA_FORMAT, df.data_format, {"cb": cb})),
        }
        braced = ir.Braced(tuple(value[f] for f in accessor.fields))
        return [ir.Declare(name, ir.SpecType(accessor.type), braced, ir.Storage.CONST)]
    args_type = accessor.compile_time_args.function
    offset: Expr = Const(0)
    if previous_args is not None:
        offset = CallValue(ir.bind(Step.ACCESSOR_OFFSET, accessor.next_offset, {}, receiver=Var(previous_args), member_of=args_type))
    args_name = kernel_names.accessor_args(dfb.name)
    args = ir.bind(Step.ACCESSOR_ARGS, accessor.compile_time_args, {"offset": offset}, member_of=args_type)
    construct = ir.bind(
        Step.ACCESSOR,
        accessor.construct,
        {"args": Var(args_name), "address": address, "page_size": page_size},
        member_of=accessor.construct.function,
    )
    return [
        ir.Declare(args_name, ir.Deduced(), CallValue(args), ir.Storage.CONSTEXPR),
        ir.Declare(name, ir.Deduced(), CallValue(construct), ir.Storage.CONST),
    ]


def _fill(dfb: Dfb, fill: Fill) -> ir.Call:
    sizes = (dfb.block_tiles, fill.tile_words, fill.faces, fill.face_words, fill.row_words)
    return ir.helper(
        kernel_names.FILL_FACE_ROWS,
        (ArgKind.CB, Var(kernel_names.cb(dfb.name))),
        *((ArgKind.COUNT, Const(n)) for n in sizes),
        (ArgKind.LITERAL, Bits(fill.word)),
    )


def _mirror(kernel: Kernel, stmts: Sequence[Statement], reading: bool, counts: Mapping[str, int], fills: Mapping[str, Fill]) -> list[Stmt]:
    out: list[Stmt] = []
    for stmt in stmts:
        if isinstance(stmt, Sync):
            if stmt.action != ("wait" if reading else "push"):
                continue
            for name in stmt.dfbs:
                dfb = kernel.dfb(name)
                if reading and name in fills:
                    out.append(_fill(dfb, fills[name]))
                    continue
                if dfb.tensor is None or dfb.tensor.role != ("input" if reading else "output"):
                    continue
                tr, tc = dfb.tensor.shape
                br, bc = dfb.block
                count = kernel_names.blocks_moved(name)
                out.append(
                    ir.helper(
                        kernel_names.READ_BLOCK if reading else kernel_names.WRITE_BLOCK,
                        (ArgKind.CB, Var(kernel_names.cb(name))),
                        (ArgKind.ACCESSOR, Var(kernel_names.tensor(name))),
                        (ArgKind.INDEX, Var(count)),
                        *((ArgKind.COUNT, Const(x)) for x in (br, bc, tr, tc)),
                    )
                )
                out.append(ir.Increment(count))
        elif isinstance(stmt, Loop):
            inner = _mirror(kernel, stmt.body, reading, {**counts, stmt.var: stmt.count}, fills)
            if inner and stmt.count > 0:  # a loop of no iterations moves nothing
                out.append(ir.For(stmt.var, Const(stmt.count), tuple(inner), generated=False))
        elif isinstance(stmt, If):
            then, orelse = _mirror(kernel, stmt.then, reading, counts, fills), _mirror(kernel, stmt.orelse, reading, counts, fills)
            if then or orelse:
                out.append(ir.If(condition(stmt.var, counts[stmt.var], stmt.condition), tuple(then), tuple(orelse)))
    return out


@dataclass(frozen=True)
class DataflowHelpers:
    """The functions the reader and writer programs define: the same for every kernel."""

    reader: tuple[ir.Function, ...]
    writer: tuple[ir.Function, ...]
    fill: ir.Function  # a reader with buffers it fills in L1 defines it too


def dataflow_helpers(df: DataflowCalls, cbs: CbCalls) -> DataflowHelpers:
    return DataflowHelpers((move_block(df, cbs, reading=True),), (move_block(df, cbs, reading=False),), fill_face_rows(df, cbs))


def dataflow_program(
    kernel: Kernel, df: DataflowCalls, helpers: DataflowHelpers, entry: EntryPoint, reading: bool, fills: Sequence[Fill] = ()
) -> ir.Program:
    """The reader (``reading``) or writer program of ``kernel``, the reader building the tiles
    of ``fills`` in L1; includes are added by the caller."""
    role = "input" if reading else "output"
    setup: list[Stmt] = []
    tensors = [d for d in kernel.dfbs if d.tensor is not None and d.tensor.role == role]
    previous: str | None = None
    for arg, dfb in enumerate(tensors):
        setup.append(ir.Declare(kernel_names.cb(dfb.name), U32, Const(dfb.index), ir.Storage.CONSTEXPR))
        setup.extend(_accessor(df, dfb, arg, previous))
        previous = kernel_names.accessor_args(dfb.name)
        setup.append(ir.Declare(kernel_names.blocks_moved(dfb.name), U32, Const(0), ir.Storage.MUTABLE))
    filled = {f.dfb: f for f in fills} if reading else {}
    for name in filled:
        setup.append(ir.Declare(kernel_names.cb(name), U32, Const(kernel.dfb(name).index), ir.Storage.CONSTEXPR))
    body = _mirror(kernel, kernel.body, reading, {}, filled)
    constructed = not isinstance(df.accessor, BracedAccessor)
    functions = helpers.reader if reading else helpers.writer
    return ir.Program(
        ir.ProgramKind.READER if reading else ir.ProgramKind.WRITER,
        (),
        (*functions, helpers.fill) if filled else functions,
        entry,
        (*setup, *body),  # every loop is the kernel spec's: nothing to simplify
        tuple(dfb.name for dfb in tensors),
        tuple(dfb.name for dfb in tensors) if constructed else (),
    )
