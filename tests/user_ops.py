"""SFPU ops a test adds by spec as a user would: tt-metal functions that TT-Lang's op set
lacks, each with the facts a user states for it, written once for every test that adds one
(tests/test_scaffold.py through `ttlgen new op`, tests/user_edits.py by hand).

The declarations are each pinned release's (ttnn 0.81.1 `current`, 0.69.0 `legacy`), as
`ttlgen upstream import --add` writes them; `ttlgen upstream check` agrees with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.spec_patch import Edit, replace


@dataclass(frozen=True)
class UserOp:
    base: str  # the op is tile_<base>, its math function <base>
    kind: str  # unary | binary
    function: str  # the tt-metal function; its init is <function>_init
    header: str
    declarations: dict[str, tuple[str, str]]  # level -> (the init's declaration, the function's)
    call: str  # the spelling's call
    math: str  # the math spec's expression
    inputs: tuple[str, ...]  # the input distribution of each operand

    @property
    def init(self) -> str:
        return f"{self.function}_init"

    def functions(self, level: str) -> str:
        """The level's declarations, as entries of a header's `functions:` list."""
        init, function = self.declarations[level]
        return f"      - signature: {init}\n        configures: [sfpu]\n      - {function}\n"

    def declaration_edit(self, specs: Path, level: str) -> Edit | None:
        """The edit declaring the functions at ``level``: under the header when the level
        lists it, else in a new header entry; None when the level declares them already."""
        text = (specs / "tt_metal" / f"{level}.yaml").read_text(encoding="utf-8")
        if f" {self.function}(" in text:
            return None
        file = f"tt_metal/{level}.yaml"
        entry = f"  {self.header}:\n"
        if entry in text:
            start = text.index(entry)
            anchor = text[start : text.index("    functions:\n", start) + len("    functions:\n")]
            return replace(file, anchor, anchor + self.functions(level))
        block = f"{entry}    kernel: compute\n    namespace: ckernel\n    functions:\n{self.functions(level)}\n"
        return replace(file, "\nheaders:\n", f"\nheaders:\n{block}")

    def math_entry(self) -> str:
        return f'  {self.base}: {{{self.kind}: "{self.math}"}}\n'

    def bindings(self) -> str:
        call = "compute::sfpu_unary(function, idst)" if self.kind == "unary" else "compute::sfpu_binary(function, idst0, idst1, odst)"
        return f'\n  {self.init}: api::no_op()\n  {self.function}: {{computes: {self.base}, call: "{call}"}}\n'


SOFTPLUS = UserOp(
    "softplus", "unary", "softplus_tile", "api/compute/eltwise_unary/softplus.h",
    {
        "current": ("void softplus_tile_init()", "template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> void softplus_tile(uint32_t idst, uint32_t beta, uint32_t beta_reciprocal, uint32_t threshold)"),
        "legacy": ("void softplus_tile_init()", "void softplus_tile(uint32_t idst, uint32_t beta, uint32_t beta_reciprocal, uint32_t threshold)"),
    },
    # beta, 1/beta and threshold are float bits: 1.0f, 1.0f and 20.0f (torch's defaults).
    "softplus_tile({dst}, 1065353216, 1065353216, 1101004800)",
    "where(x > 20, x, log1p(exp(x)))", ("normal",),
)  # fmt: skip
LOG1P = UserOp(
    "log1p", "unary", "log1p_tile", "api/compute/eltwise_unary/log1p.h",
    {
        "current": (
            "template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> void log1p_tile_init()",
            "template <bool fast_and_approx = false, bool is_fp32_dest_acc_en = DST_ACCUM_MODE> void log1p_tile(uint32_t idst)",
        ),
        "legacy": ("template <bool fast_and_approx = false> void log1p_tile_init()", "template <bool fast_and_approx = false> void log1p_tile(uint32_t idst)"),
    },
    "log1p_tile({dst})", "log1p(x)", ("positive",),
)  # fmt: skip
POW = UserOp(
    "pow", "binary", "power_binary_tile", "api/compute/eltwise_binary_sfpu.h",
    {
        "current": ("void power_binary_tile_init()", "template <bool is_fp32_dest_acc_en = DST_ACCUM_MODE> void power_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)"),
        "legacy": ("void power_binary_tile_init()", "void power_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)"),
    },
    "power_binary_tile({lhs.dst}, {rhs.dst}, {dst})", "pow(x, y)", ("positive", "normal"),
)  # fmt: skip
GE = UserOp(
    "ge", "binary", "ge_binary_tile", "api/compute/eltwise_binary_sfpu.h",
    {level: ("void ge_binary_tile_init()", "void ge_binary_tile(uint32_t idst0, uint32_t idst1, uint32_t odst)") for level in ("current", "legacy")},
    "ge_binary_tile({lhs.dst}, {rhs.dst}, {dst})", "x >= y", ("normal", "normal"),
)  # fmt: skip

UNARIES = (SOFTPLUS, LOG1P)
BINARIES = (POW, GE)
