"""A catalogue of spec edits, each classified by ``ttlgen compat`` exactly as expected.

Each case commits the real specs to a fresh repository, applies one edit to the working
tree and compares it with the commit. The expected findings are the complete list of
(category, kind, subject): a missing finding, an extra one or a wrong category fails, and
so does a wrong exit code (1 exactly when a breaking change is not covered by a major bump
of the layout's ABI version).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from compat_support import Edit, apply, compat_json, git, make_repo

LAYOUT = "abi/komorebi.yaml"
PROGRAM = "programs/mapcollect.yaml"
RELATIONS = "targets/gen1_llk.yaml"
ELEMENTWISE_OPS = "ops/elementwise.yaml"
MAJOR_BUMP: Edit = (LAYOUT, "abi_version: {major: 1, minor: 0}", "abi_version: {major: 2, minor: 0}")
MINOR_BUMP: Edit = (LAYOUT, "abi_version: {major: 1, minor: 0}", "abi_version: {major: 1, minor: 1}")
PRIORITY: Edit = (
    LAYOUT,
    "      - {name: slot, lsb: 16, bits: 8, indexes: ring, doc: the ring slot the command was written to}\n",
    "      - {name: slot, lsb: 16, bits: 8, indexes: ring, doc: the ring slot the command was written to}\n"
    "      - {name: priority, lsb: 24, bits: 8, doc: scheduling priority}\n",
)
FP32_DEST_RULE: Edit = (
    RELATIONS,
    "      - when: {element_bits: [32]}\n        allow: [32]\n      - allow: [16, 32]\n\n  dest_width_unrestricted:",
    "      - when: {element_bits: [32]}\n        allow: [16, 32]\n      - allow: [16, 32]\n\n  dest_width_unrestricted:",
)
BUILDERS = ("komorebi_abi.programs.mapcollect.collect_command", "komorebi_abi.programs.mapcollect.map_command")
SHARED_DEST_WIDTH = "relation table gen1_llk.dest_width (dest_width) of targets blackhole, blackhole_gen1_config, wormhole_b0, wormhole_b0_gen1_config"
TRACE_TABLE = "  trace:\n    prefix: trace\n    size: 4\n    count_name: trace_words\n"
TRACE_TABLE_BODY = """\
    doc: Wall-clock words kept per traced sequence number (sequences 1 to trace_cap).
    entries:
      - {name: seen, index: 0, doc: the reader took the command}
      - {name: done, index: 1, doc: "the writer's outputs were written"}
      - {name: sent, index: 2, doc: completion was sent}
      - {name: extra, index: 3, doc: "the reader's ring passes for this command"}

"""
PROGRAM_COLLECT = """\
  - name: collect
    id: 2
    doc: Sum the partial results of the group on its first core and report the total.
    flags: [exclusive, result]
    args:
      - {name: partials, doc: DRAM address of the per-core partial results}
      - {name: out, doc: DRAM address of the collected result}
      - {name: port, doc: the port the partial results arrive on}
"""
STRICT_TARGET = """\
spec: ttlgen.target/v1
name: blackhole_strict
summary: Blackhole with 32-bit DST only, for a test.
architecture: blackhole
runtime_api: ComputeConfigDescriptor
relations:
  dfb_unpack:
    shared: gen1_llk.dfb_unpack
    review: the Gen1 unpack contract.
  dest_width:
    rules:
      - allow: [32]
"""


@dataclass(frozen=True)
class Case:
    id: str
    edits: list[Edit]
    findings: set[tuple[str, str, str]]  # (category, kind, subject)
    exit_code: int
    base: list[Edit] = field(default_factory=list)  # committed before the edit, when the real specs lack what it needs


A9_RESERVED: list[Edit] = [
    (LAYOUT, "      - {name: a9, offset: 60}\n", "      - {name: spare, offset: 60, reserved: true}\n"),
    (LAYOUT, "fields: [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9]", "fields: [a0, a1, a2, a3, a4, a5, a6, a7, a8]"),
]


CASES = [
    Case(
        "swapped-enum-values",
        [
            (LAYOUT, "{name: stop, value: 1, doc: the stop flag was set}", "{name: stop, value: 2, doc: the stop flag was set}"),
            (LAYOUT, "{name: limit, value: 2, doc: the wait timed out}", "{name: limit, value: 1, doc: the wait timed out}"),
        ],
        {
            ("layout wire", "enum-value", "value 'stop' of enum 'gave'"),
            ("layout wire", "enum-value", "value 'limit' of enum 'gave'"),
        },
        1,
    ),
    Case(
        "resized-bit-field",
        [(LAYOUT, "{name: slot, lsb: 16, bits: 8, indexes: ring,", "{name: slot, lsb: 16, bits: 16, indexes: ring,")],
        {("layout wire", "bit-width", "bit field 'slot' of word 'hdr'")},
        1,
    ),
    Case(
        "moved-bit-field",
        [(LAYOUT, "{name: compute, lsb: 16, bits: 8, enum: end}", "{name: compute, lsb: 24, bits: 8, enum: end}")],
        {("layout wire", "bit-position", "bit field 'compute' of word 'ends'")},
        1,
    ),
    Case(
        "two-swapped-offsets",
        [(LAYOUT, "      - {name: a0, offset: 12}\n", "      - {name: a0, offset: 20}\n"), (LAYOUT, "      - {name: a1, offset: 20}\n", "      - {name: a1, offset: 12}\n")],
        {
            ("layout wire", "field-offset", "field 'a0' of struct 'command'"),
            ("layout wire", "field-offset", "field 'a1' of struct 'command'"),
        },
        1,
    ),
    Case(
        "region-added-in-reserved-space",
        [
            (
                LAYOUT,
                '      - {offset: 0x420, size: 0x20, reserved: true, doc: "reserved (pads DONE to a 64-byte line)"}\n',
                "      - {name: wake, offset: 0x420, size: 0x10, doc: a wake-up word}\n"
                '      - {offset: 0x430, size: 0x10, reserved: true, doc: "reserved (pads DONE to a 64-byte line)"}\n',
            )
        ],
        {("layout compatible", "region-added", "region 'wake' of block 'control'")},
        0,
    ),
    Case(
        "bit-field-added-in-reserved-bits",
        [PRIORITY],
        {
            ("layout compatible", "bit-field-added", "bit field 'priority' of word 'hdr'"),
            ("layout source", "c-signature", "C function km_hdr_pack"),
            *(("programs compatible", "python-keyword-added", f"Python builder {b}") for b in BUILDERS),
        },
        1,
    ),
    Case(
        "bit-field-added-with-a-major-bump",
        [PRIORITY, MAJOR_BUMP],
        {
            ("layout compatible", "bit-field-added", "bit field 'priority' of word 'hdr'"),
            ("layout source", "c-signature", "C function km_hdr_pack"),
            *(("programs compatible", "python-keyword-added", f"Python builder {b}") for b in BUILDERS),
        },
        0,
    ),
    Case(
        "struct-field-added-in-reserved-bytes",
        [(file, new, old) for file, old, new in A9_RESERVED],  # the reserved word named again
        {
            ("layout compatible", "field-added", "field 'a9' of struct 'command'"),
            ("layout compatible", "array-grown", "array 'args' of struct 'command'"),
        },
        0,
        base=A9_RESERVED,
    ),
    Case(
        "table-entry-added-in-a-reserved-word",
        [(LAYOUT, "{name: spare, index: 3, reserved: true, doc: unused}", "{name: writer, index: 3, doc: the last sequence whose writer body returned}")],
        {("layout compatible", "table-entry-added", "entry 'writer' of table 'done'")},
        0,
    ),
    Case(
        "constant-value",
        [(LAYOUT, "    value: 1024\n", "    value: 2048\n")],
        {("layout wire", "constant-value", "constant 'limit_cycles'")},
        1,
    ),
    Case(
        "new-struct",
        [(LAYOUT, "structs:\n", "structs:\n  ping:\n    doc: A test struct.\n    size: 8\n    fields:\n      - {name: token, offset: 0}\n      - {name: reply, offset: 4}\n")],
        {("layout compatible", "struct-added", "struct 'ping'")},
        0,
    ),
    Case(
        "new-constant",
        [(LAYOUT, "  - name: behind_port\n", "  - {name: max_cores, value: 128, doc: cores in a core table}\n  - name: behind_port\n")],
        {("layout compatible", "constant-added", "constant 'max_cores'")},
        0,
    ),
    Case(
        "new-constant-with-a-minor-bump",
        [(LAYOUT, "  - name: behind_port\n", "  - {name: max_cores, value: 128}\n  - name: behind_port\n"), MINOR_BUMP],
        {("layout compatible", "constant-added", "constant 'max_cores'")},
        0,
    ),
    Case(
        "enum-value-named-in-a-reserved-value",
        [(LAYOUT, "{value: 16, reserved: true, doc: free}", "{name: retry, value: 16, doc: a retried wait}")],
        {("layout compatible", "enum-value-added", "value 'retry' of enum 'where'")},
        0,
    ),
    Case(
        "removed-flag",
        [(LAYOUT, '      - {name: queue, value: 8, doc: "dispatcher only: the group allocator chooses first"}\n', "")],
        {("layout wire", "enum-value-removed", "flag 'queue' of enum 'flag'")},
        1,
    ),
    Case(
        "renamed-enum-value",
        [(LAYOUT, "{name: gave_up, value: 2,", "{name: gaveup, value: 2,")],
        {("layout source", "enum-value-renamed", "value 'gave_up' of enum 'end'")},
        1,
    ),
    Case(
        "renamed-bit-field",
        [(LAYOUT, "{name: count, lsb: 16, bits: 16, doc: cores in the group}", "{name: cores, lsb: 16, bits: 16, doc: cores in the group}")],
        {
            ("layout source", "bit-field-renamed", "bit field 'count' of word 'group'"),
            ("layout source", "c-signature", "C function km_group_pack"),
            *(("programs source", "python-keyword-removed", f"Python builder {b}") for b in BUILDERS),
            *(("programs compatible", "python-keyword-added", f"Python builder {b}") for b in BUILDERS),
        },
        1,
    ),
    Case(
        "renamed-struct-field",
        [(LAYOUT, "{name: land3, offset: 48, copy_of: sequence}", "{name: land_c, offset: 48, copy_of: sequence}")],
        {("layout source", "field-renamed", "field 'land3' of struct 'command'")},
        1,
    ),
    Case(
        "reordered-array",
        [(LAYOUT, "fields: [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9]", "fields: [a1, a0, a2, a3, a4, a5, a6, a7, a8, a9]")],
        {("layout wire", "array-members", "array 'args' of struct 'command'")},
        1,
    ),
    Case(
        "region-resized",
        [
            (LAYOUT, '{name: stop, offset: 0x410, size: 0x10, doc: "stop', '{name: stop, offset: 0x410, size: 0x20, doc: "stop'),
            (LAYOUT, '{offset: 0x420, size: 0x20, reserved: true,', '{offset: 0x430, size: 0x10, reserved: true,'),
        ],
        {("layout wire", "region-size", "region 'stop' of block 'control'")},
        1,
    ),
    Case(
        "block-alignment",
        [(LAYOUT, "    prefix: control\n    align: 16\n", "    prefix: control\n    align: 8\n")],
        {("layout wire", "block-alignment", "block 'control'")},
        1,
    ),
    Case(
        "swapped-table-indices",
        [
            (LAYOUT, "{name: runs, index: 38,", "{name: runs, index: 39,"),
            (LAYOUT, "{name: passes, index: 39,", "{name: passes, index: 38,"),
        ],
        {("layout wire", "table-index", "entry 'runs' of table 'state'"), ("layout wire", "table-index", "entry 'passes' of table 'state'")},
        1,
    ),
    Case(
        "renamed-table",
        [(LAYOUT, TRACE_TABLE, TRACE_TABLE.replace("  trace:", "  trace_words:"))],
        {("layout source", "table-renamed", "table 'trace'")},
        1,
    ),
    Case(
        "removed-table",
        [(LAYOUT, TRACE_TABLE + TRACE_TABLE_BODY, "")],
        {("layout wire", "table-removed", "table 'trace'")},
        1,
    ),
    Case(
        "enum-width",
        [(LAYOUT, "    prefix: cb\n    bits: 5\n", "    prefix: cb\n    bits: 6\n")],
        {("layout wire", "enum-width", "enum 'cb'")},
        1,
    ),
    Case(
        "renumbered-handler",
        [(PROGRAM, "  - name: collect\n    id: 2\n", "  - name: collect\n    id: 3\n")],
        {("programs wire", "handler-renumbered", "handler 'collect' of program 'mapcollect'")},
        1,
    ),
    Case(
        "handler-flags",
        [(PROGRAM, "    flags: [exclusive, result]\n", "    flags: [exclusive]\n")],
        {("programs wire", "handler-flags", "handler 'collect' of program 'mapcollect'")},
        1,
    ),
    Case(
        "removed-handler",
        [(PROGRAM, PROGRAM_COLLECT, "")],
        {("programs wire", "handler-removed", "handler 'collect' of program 'mapcollect'")},
        1,
    ),
    Case(
        "renumbered-handler-with-a-major-bump",
        [(PROGRAM, "  - name: collect\n    id: 2\n", "  - name: collect\n    id: 3\n"), MAJOR_BUMP],
        {("programs wire", "handler-renumbered", "handler 'collect' of program 'mapcollect'")},
        0,
    ),
    Case(
        "renamed-handler-argument",
        [(PROGRAM, "{name: tiles, doc: number of tiles across the group}", "{name: ntiles, doc: number of tiles across the group}")],
        {("programs source", "argument-renamed", "argument 'tiles' of handler 'map' of program 'mapcollect'")},
        1,
    ),
    Case(
        "relation-change-flips-shipped-kernels",
        [FP32_DEST_RULE],
        {
            ("capabilities", "relation", SHARED_DEST_WIDTH),
            ("capabilities", "kernel-plan", "kernel 'eltwise_add_f32'"),
            ("capabilities", "kernel-plan", "kernel 'eltwise_mul_f32'"),
        },
        0,
    ),
    Case(
        "op-semantics-change-flips-a-kernel",
        [("ops/reshape.yaml", "values: {row: reduce_row, col:", "values: {row: reduce_column, col:")],
        {("capabilities", "op-semantics", "op 'tile_reduce'"), ("capabilities", "kernel-plan", "kernel 'reduce_row_bf16'")},
        0,
    ),
    Case(
        "kernel-policy-change-flips-its-plan",
        [("kernels/elementwise.yaml", "    policy:\n      options: {enable-fpu-binary-ops: false}\n", "")],
        {("capabilities", "kernel-plan", "kernel 'eltwise_mul_bf16_sfpu'")},
        0,
    ),
    Case(
        "new-op",
        [(ELEMENTWISE_OPS, "tile_neg, tile_abs, tile_relu]", "tile_neg, tile_abs, tile_relu, tile_gelu]")],
        {("capabilities", "op-added", "op 'tile_gelu'")},
        0,
    ),
    Case(
        "new-target",
        [("targets/blackhole_strict.yaml", "", STRICT_TARGET)],
        {("capabilities", "target-added", "target 'blackhole_strict'")},
        0,
    ),
    Case(
        "version-going-back",
        [(LAYOUT, "abi_version: {major: 1, minor: 0}", "abi_version: {major: 0, minor: 9}")],
        {("layout wire", "version-backwards", "the ABI version of layout 'komorebi'")},
        1,
    ),
]


@pytest.fixture(scope="module")
def base_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("compat"))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_compat_classifies_the_edit(case: Case, base_repo: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(base_repo, repo)
    if case.base:
        apply(repo, case.base)
        git(repo, "commit", "-q", "-am", "the base of the case")
    apply(repo, case.edits)
    code, report = compat_json(repo)
    changes = report["changes"]
    assert isinstance(changes, list)
    found = {(c["category"], c["kind"], c["subject"]) for c in changes}
    assert found == case.findings, report
    assert code == case.exit_code, report
