"""Property test: the resolver library against an independent brute-force oracle.

The oracle re-states the op facts it needs (from the facts table, not the generated
op table), enumerates every strategy assignment and every complete configuration to
decide whether a plan exists, and runs the plain exhaustive search of the design (count
every unresolved op's compatible options at every step, fewest first, ties by walk
order, FPU before SFPU, backtracking) to find the expected first solution. Target
relations come from the target's public queries.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import LONG_TESTS, real_project
from tests.resolver.kit import catalog, engine

W16, W32 = 16, 32
D, U = "default", "unpack_to_dest"
# Every target of the specs (no_target is None: no target named), the rejected ones too.
TARGETS = tuple(None if t.name == "no_target" else t.name for t in real_project().targets.targets)
REJECTED = tuple(t.name for t in real_project().targets.targets if t.rejected is not None)
TYPES = ("f32", "bf16", "f16", "si32")
BINARY_ALTERNATIVES = ("tile_add", "tile_sub", "tile_mul")


@dataclass(frozen=True)
class OracleOp:
    id: str
    name: str
    primitive: str
    routes: dict[str | None, tuple[str, ...]]  # strategy (None: fixed) -> route per operand
    operands: tuple[Any, ...]  # ("dfb", index, tile) | ("value", id)
    result: str | None
    full_fp32: str | None
    explicit: str | None


# --------------------------------------------------------------------------- generation

@st.composite
def kernels(draw: st.DrawFn) -> dict[str, Any]:
    n_dfbs = draw(st.integers(1, 4))
    dfbs = {i: draw(st.sampled_from(TYPES)) for i in range(n_dfbs)}
    ops: list[dict[str, Any]] = []
    results: list[str] = []
    for i in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(("binary", "binary", "binary", "max", "exp", "copy", "copy_dst", "store", "bcast", "reduce", "transpose", "matmul")))
        def from_dfb() -> tuple[Any, ...]:
            return ("dfb", draw(st.integers(0, n_dfbs - 1)), draw(st.sampled_from(((0, 0), (0, 0), (1, 0)))))
        def any_operand() -> tuple[Any, ...]:
            if results and draw(st.booleans()) and draw(st.booleans()):
                return ("value", draw(st.sampled_from(results)))
            return from_dfb()
        op: dict[str, Any] = {"id": f"op{i}", "attrs": {}}
        if kind in ("binary", "max"):
            op["op"] = draw(st.sampled_from(BINARY_ALTERNATIVES)) if kind == "binary" else "tile_max"
            op["operands"] = [any_operand(), any_operand()]
            if kind == "binary" and draw(st.integers(0, 5)) == 0:
                op["strategy"] = draw(st.sampled_from(("fpu", "sfpu")))
        elif kind == "exp":
            op["op"], op["operands"] = "tile_exp", [any_operand()]
        elif kind == "copy":
            op["op"], op["operands"] = "copy_tile", [from_dfb()]
        elif kind in ("copy_dst", "store"):
            if not results:
                continue
            op["op"] = "copy_dst" if kind == "copy_dst" else "tile_store"
            op["operands"] = [("value", draw(st.sampled_from(results)))]
        elif kind == "bcast":
            op["op"], op["operands"] = "tile_bcast", [from_dfb()]
            op["attrs"]["bcast"] = draw(st.sampled_from(("col", "row", "scalar")))
        elif kind == "reduce":
            op["op"], op["operands"] = "tile_reduce", [from_dfb(), from_dfb()]
            op["attrs"]["reduce_dim"] = draw(st.sampled_from(("row", "col", "scalar")))
        elif kind == "transpose":
            op["op"], op["operands"] = "tile_transpose", [from_dfb()]
        else:
            op["op"], op["operands"] = "tile_matmul_block", [from_dfb(), from_dfb()]
        if op["op"] != "tile_store" and draw(st.integers(0, 7)) == 0:
            op["result"] = draw(st.sampled_from(TYPES))
        ops.append(op)
        if op["op"] != "tile_store":
            results.append(op["id"])
    if not ops:
        ops.append({"id": "c", "op": "copy_tile", "operands": [("dfb", 0, (0, 0))], "attrs": {}})
    options = {
        "fp32-dest-acc-en": draw(st.sampled_from(("auto", "auto", "enabled", "disabled"))),
        "dst-full-sync-en": draw(st.sampled_from(("auto", "enabled", "disabled"))),
        "reduce-full-fp32": draw(st.booleans()),
        "matmul-full-fp32": draw(st.booleans()),
        "enable-fpu-binary-ops": draw(st.sampled_from((True, True, False))),
    }
    attributes: dict[str, Any] = {}
    if draw(st.integers(0, 3)) == 0:
        attributes["ttl.unpack_to_dest_fp32"] = draw(st.lists(st.integers(0, n_dfbs - 1), max_size=4))
    return {"target": draw(st.sampled_from(TARGETS)), "dfbs": dfbs, "ops": ops, "options": options, "attributes": attributes}


# ------------------------------------------------------------------------------ oracle

BCAST = {"col": "BroadcastColumn", "row": "BroadcastRow", "scalar": "BroadcastScalar"}
REDUCE = {"row": "reduce_row", "col": "reduce_column", "scalar": "reduce_scalar"}


def oracle_ops(spec: dict[str, Any]) -> list[OracleOp] | None:
    """The facts table for the ops the generator uses; None if the kernel is invalid."""
    types: dict[str, str | None] = {}
    out = []
    for op in spec["ops"]:
        name, operands = op["op"], tuple(op["operands"])
        elements = [spec["dfbs"][o[1]] if o[0] == "dfb" else types[o[1]] for o in operands]
        result = op.get("result") or (elements[0] if elements else None)
        full = None
        if name in BINARY_ALTERNATIVES:
            prim, routes = "ElementwiseBinary", {"fpu": ("dfb", "dfb"), "sfpu": ("dst", "dst")}
        elif name == "tile_max":
            prim, routes = "ElementwiseBinary", {"sfpu": ("dst", "dst")}
        elif name == "tile_exp":
            prim, routes = "ElementwiseUnary", {"sfpu": ("dst",)}
        elif name == "copy_tile":
            prim, routes = "Copy", {None: ("dfb",)}
        elif name == "copy_dst":
            prim, routes = "Copy", {None: ("dst",)}
        elif name == "tile_store":
            prim, routes, result = "Store", {None: ("dst",)}, None
        elif name == "tile_bcast":
            prim, routes = BCAST[op["attrs"]["bcast"]], {None: ("dfb",)}
        elif name == "tile_reduce":
            prim, routes, full = "Reduce", {None: ("dfb", "dfb")}, REDUCE[op["attrs"]["reduce_dim"]]
        elif name == "tile_transpose":
            prim, routes = "Transpose", {None: ("dfb",)}
        else:
            prim, routes, full = "Matmul", {None: ("dfb", "dfb")}, "matmul"
        types[op["id"]] = result
        out.append(OracleOp(op["id"], name, prim, routes, operands, result, full, op.get("strategy")))
    return out


def options_of(op: OracleOp, fpu_enabled: bool) -> list[str | None] | None:
    """Legal strategies in FPU-then-SFPU order; None when the kernel must be rejected."""
    def legal(strategy: str | None) -> bool:
        if strategy != "fpu":
            return True
        tiles = {o[2] for o in op.operands if o[0] == "dfb"}
        all_dfb = all(o[0] == "dfb" for o in op.operands)
        return all_dfb and len(tiles) == 1 and op.result in ("f32", "bf16", "f16")
    declared = [s for s in ("fpu", "sfpu", None) if s in op.routes]
    if op.explicit is not None:
        if op.explicit == "fpu" and not fpu_enabled:
            return None
        return [op.explicit] if op.explicit in declared and legal(op.explicit) else None
    return [s for s in declared if legal(s) and (fpu_enabled or s != "fpu")]


Config = tuple[int, dict[int, str]]


def allowed(env: Any, spec: dict[str, Any], op: OracleOp, strategy: str | None) -> list[tuple[int | None, frozenset[tuple[int, str | None]]]]:
    """(dfb or None, allowed (width, mode) pairs) for each requirement of one option."""
    prim = op.primitive
    reqs: list[tuple[int | None, frozenset[tuple[int, str | None]]]] = []
    for operand, route in zip(op.operands, op.routes[strategy], strict=True):
        if operand[0] == "dfb" and route != "none":
            pairs = env.dfb_configurations(prim, spec["dfbs"][operand[1]], engine.Route(route))
            reqs.append((operand[1], frozenset((int(w), m.value) for w, m in pairs)))
    dest_types = [op.result] if op.result else [
        spec_type(spec, o) for o, r in zip(op.operands, op.routes[strategy], strict=True) if r == "dst"
    ]
    for element in dest_types:
        widths = env.dest_widths(prim, element)
        reqs.append((None, frozenset((int(w), None) for w in widths)))
    return reqs


def spec_type(spec: dict[str, Any], operand: Any) -> str:
    if operand[0] == "dfb":
        return str(spec["dfbs"][operand[1]])
    for op in oracle_ops(spec) or []:
        if op.id == operand[1]:
            assert op.result is not None
            return op.result
    raise AssertionError(operand)


def satisfies(config: Config, reqs: list[tuple[int | None, frozenset[tuple[int, str | None]]]]) -> bool:
    width, modes = config
    for dfb, pairs in reqs:
        if dfb is None:
            if (width, None) not in pairs:
                return False
        elif (width, modes[dfb]) not in pairs:
            return False
    return True


def policy_ok(config: Config, spec: dict[str, Any], env: Any) -> bool:
    width, modes = config
    fp32 = spec["options"]["fp32-dest-acc-en"]
    if (fp32 == "enabled" and width != W32) or (fp32 == "disabled" and width != W16):
        return False
    listed = spec["attributes"].get("ttl.unpack_to_dest_fp32")
    if listed is not None:
        for dfb, element in spec["dfbs"].items():
            if element in env.table.unpack_effective_for:
                if modes[dfb] != (U if dfb in listed else D):
                    return False
            elif dfb in listed and env.table.unpack_other_entries_need_32bit_dest and width != W32:
                return False
    return True


Domains = tuple[frozenset[int], dict[int, frozenset[str]]]


def narrow(doms: Domains, reqs: list[Any]) -> Domains | None:
    """Intersect the domains with one option's requirements; None when one empties."""
    widths, modes = doms[0], dict(doms[1])
    for dfb, pairs in reqs:
        if dfb is None:
            widths = widths & {w for w, _ in pairs}
        else:
            widths = widths & {w for w, m in pairs if m in modes[dfb]}
            modes[dfb] = modes[dfb] & {m for w, m in pairs if w in widths}
            if not modes[dfb]:
                return None
        if not widths:
            return None
    return widths, modes


def plain_search(domains: Domains, pending: list[tuple[OracleOp, list[tuple[str, list[Any]]]]]) -> dict[str, str] | None:
    """The design's search, literally: recount everything at every step."""
    if not pending:
        return {}
    counts = []
    for index, (_, options) in enumerate(pending):
        compatible = [o for o in options if narrow(domains, o[1]) is not None]
        counts.append((len(compatible), index, compatible))
    _, index, compatible = min(counts, key=lambda c: (c[0], c[1]))
    op = pending[index][0]
    rest = pending[:index] + pending[index + 1:]
    for strategy, reqs in compatible:
        narrowed = narrow(domains, reqs)
        assert narrowed is not None
        found = plain_search(narrowed, rest)
        if found is not None:
            return {op.id: strategy, **found}
    return None


def oracle(spec: dict[str, Any]) -> dict[str, Any] | None:
    if spec["target"] in REJECTED:
        return None
    env = catalog().get_target(spec["target"])
    ops = oracle_ops(spec)
    assert ops is not None
    fpu = spec["options"]["enable-fpu-binary-ops"]
    per_op: list[tuple[OracleOp, list[tuple[str | None, list[Any]]]]] = []
    for op in ops:
        options = options_of(op, fpu)
        if not options:
            return None
        per_op.append((op, [(s, allowed(env, spec, op, s)) for s in options]))
    dfbs = sorted(spec["dfbs"])
    configs: list[Config] = [
        (w, dict(zip(dfbs, modes, strict=True)))
        for w in (W16, W32)
        for modes in itertools.product((D, U), repeat=len(dfbs))
    ]
    configs = [c for c in configs if policy_ok(c, spec, env)]
    exists = any(
        all(satisfies(c, reqs) for reqs in choice)
        for c in configs
        for choice in itertools.product(*[[r for _, r in opts] for _, opts in per_op])
    )
    if not exists:
        return None
    # Domains after hard policy and fixed ops (every relation is a product, so sets are exact).
    doms: Domains | None = (
        frozenset(c[0] for c in configs),
        {d: frozenset(c[1][d] for c in configs) for d in dfbs},
    )
    fixed = [(op, opts) for op, opts in per_op if len(opts) == 1]
    search = [(op, opts) for op, opts in per_op if len(opts) > 1]
    for _, opts in fixed:
        assert doms is not None
        doms = narrow(doms, opts[0][1])
    assert doms is not None, "a plan exists, so the fixed requirements are compatible"
    found = plain_search(doms, search)  # type: ignore[arg-type]
    assert found is not None, "a plan exists, so the complete search finds one"
    chosen: dict[str, str | None] = {op.id: opts[0][0] for op, opts in fixed}
    chosen.update(found)
    for op, opts in search:
        doms = narrow(doms, next(r for s, r in opts if s == chosen[op.id]))
        assert doms is not None
    widths, modes = doms
    preferred = [
        op for op in ops if op.full_fp32
        and spec["options"]["matmul-full-fp32" if op.full_fp32 == "matmul" else "reduce-full-fp32"]
        and env.full_fp32(op.full_fp32).supported
    ]
    width = W32 if (preferred and W32 in widths) or W16 not in widths else W16
    listed = spec["attributes"].get("ttl.unpack_to_dest_fp32")
    unpack = sorted(set(listed)) if listed is not None else sorted(d for d in dfbs if modes[d] == {U})
    strategies = {op.id: chosen[op.id] for op in ops if op.name in BINARY_ALTERNATIVES}
    return {"strategies": strategies, "width": width, "unpack": unpack}


def build(spec: dict[str, Any]) -> Any:
    from tests.resolver.kit import kernel

    entries = []
    for op in spec["ops"]:
        extra = dict(op["attrs"])
        if op.get("strategy"):
            extra["strategy"] = op["strategy"]
        if op.get("result"):
            extra["result"] = op["result"]
        entries.append((op["id"], op["op"], op["operands"], extra))
    return kernel(spec["dfbs"], *entries)


@settings(
    max_examples=int(os.environ.get("RESOLVER_ORACLE_EXAMPLES", "400")),
    derandomize=not LONG_TESTS,  # the suite's examples are the same every run
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(kernels())
def test_resolver_matches_brute_force_oracle(spec: dict[str, Any]) -> None:
    result = catalog().resolve_kernel(build(spec), target=spec["target"], options=spec["options"], attributes=spec["attributes"])
    expected = oracle(spec)
    if expected is None:
        assert isinstance(result, engine.ResolveFailure), f"oracle finds no plan, resolver found {result}"
        return
    assert isinstance(result, engine.Plan), f"oracle finds {expected}, resolver failed: {result.format()}"
    # Every relation holds for the plan's concrete configuration.
    env = catalog().get_target(spec["target"])
    effective = env.table.unpack_effective_for
    modes = {d: (U if d in result.unpack_to_dest_fp32 and t in effective else D) for d, t in spec["dfbs"].items()}
    config = (int(result.dest_width), modes)
    assert policy_ok(config, spec, env)
    for op in oracle_ops(spec) or []:
        strategy = result.strategy_of(op.id) if op.name in BINARY_ALTERNATIVES else next(iter(op.routes))
        assert satisfies(config, allowed(env, spec, op, strategy)), op
    # And the plan is the first solution of the plain exhaustive search.
    assert {i: str(s) for i, s in result.strategies} == expected["strategies"]
    assert int(result.dest_width) == expected["width"]
    assert list(result.unpack_to_dest_fp32) == expected["unpack"]
