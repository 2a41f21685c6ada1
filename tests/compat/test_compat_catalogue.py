"""A catalogue of spec edits, each classified by ``ttlgen compat`` exactly as expected.

Each case commits the real specs to a fresh repository, applies one edit to the working
tree and compares it with the commit. The expected findings are the complete list of
(category, kind, subject, location before, location after), compared as sorted lists so
a finding reported twice fails as much as a missing one, an extra one or a wrong
category; a location is the spec file and key path at that side (``None``: the side does
not have it), and its line and column are checked against that side's file. A wrong exit
code fails too (1 exactly when a breaking change is not covered by a major bump of the
layout's ABI version). Every generated name a case makes vanish must come with a breaking
finding about the thing it named.

An edit of capability inputs only (ops, targets, spellings, kernels) and an edit of
layouts and programs only share a working tree (:func:`side_by_side`): compat compares
layouts and programs from their own documents and plans from the others', and takes exit
codes from the layouts' versions alone, so the report of the two is the report of each
together; each case is held to its own findings, and to its exit code through the status
of its own changes.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from compat_support import Edit, apply, assert_positions, git, located, make_repo

from tests.conftest import real_project
from ttlgen.compat.git_specs import Revision
from ttlgen.compat.sides import Side, SpecPaths
from ttlgen.compat.verdict import compare, sides
from ttlgen.model.namespaces import Scope, scan
from ttlgen.plan.project import ProjectPlan

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


Finding = tuple[str, str, str, str | None, str | None]  # (category, kind, subject, before, after)


@dataclass(frozen=True)
class Case:
    id: str
    edits: list[Edit]
    findings: list[Finding]  # every finding but the kernel-plan ones, which depend on the kernels the specs hold
    exit_code: int
    base: list[Edit] = field(default_factory=list)  # committed before the edit, when the real specs lack what it needs
    # Shipped kernels whose plan the edit changes (at least these): the case's example. The
    # kernel-plan findings expected are every kernel whose plan differs after the edit.
    flips: tuple[str, ...] = ()


def of_architecture(architecture: str) -> str:
    """The targets of ``architecture``, as a finding's subject lists them."""
    return ", ".join(repr(t.name) for t in real_project().targets.targets if t.architecture == architecture)


def sharing(table: str) -> str:
    """The targets that use relation table ``table``, as a finding's subject lists them."""
    return ", ".join(t.name for t in real_project().targets.targets if t.dest_width and t.dest_width.origin == table)


A9_RESERVED: list[Edit] = [
    (LAYOUT, "      - {name: a9, offset: 60}\n", "      - {name: spare, offset: 60, reserved: true}\n"),
    (LAYOUT, "fields: [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9]", "fields: [a0, a1, a2, a3, a4, a5, a6, a7, a8]"),
]


# An op family of its own file: a new op whatever ops the real specs declare.
EXTRA_OPS = """\
spec: ttlgen.ops/v1
families:
  extra_unary:
    summary: An op no real spec declares, for a test.
    names: [tile_no_such_op]
    primitive: ElementwiseUnary
    operands:
      - {name: input}
    result: dst
    strategies:
      - strategy: sfpu
        routes: {input: dst}
        accumulates: false
"""
# The SFPU unaries as the real elementwise spec lists them (a finding names an op by index).


NEW_KERNEL = """\
  eltwise_add_bf16_copy:
    summary: out = a + b over bf16 tiles, a second time (a test).
    target: blackhole
    dfbs:
      a: {index: 0, dtype: bf16, block: [1, 2], input: {shape: [2, 2]}}
      b: {index: 1, dtype: bf16, block: [1, 2], input: {shape: [2, 2]}}
      out: {index: 16, dtype: bf16, block: [1, 2], output: {shape: [2, 2]}}
    body:
      - loop:
          var: i
          count: 2
          body:
            - wait: [a, b]
            - reserve: out
            - store: {to: out, value: {op: tile_add, args: [a, b]}}
            - pop: [a, b]
            - push: out
    tolerance: {pcc: 0.999, max_rel: 1.0e-2, derivation: "bf16: as eltwise_add_bf16"}

"""
# A rule no golden pins (removing one a golden pins is a spec error since goldens are checked
# at validate): the first rule of the table only the target without an architecture uses.
UNRESTRICTED_FP32_RULE = (
    "      # The same width rule without architecture-specific primitive restrictions.\n"
    "      - when: {element_bits: [32]}\n"
    "        allow: [32]\n"
)
# A kernel of its own file whose policy decides its plan: the case removes the policy.
POLICY_KERNEL = NEW_KERNEL.replace("  eltwise_add_bf16_copy:", "spec: ttlgen.kernel/v1\nkernels:\n  mul_bf16_by_policy:").replace(
    "    target: blackhole\n", "    target: blackhole\n    policy:\n      options: {enable-fpu-binary-ops: false}\n"
).replace("tile_add", "tile_mul").replace("out = a + b over bf16 tiles, a second time", "out = a * b, on the SFPU by policy")
ENDS_FIELDS = [("reader", 0), ("writer", 8), ("compute", 16)]
LANDS = [(1, 16), (2, 32), (3, 48)]

CASES: list[Case] = [
    # -- layout, wire -----------------------------------------------------------------
    Case(
        "swapped-enum-values",
        [
            (LAYOUT, "{name: stop, value: 1, doc: the stop flag was set}", "{name: stop, value: 2, doc: the stop flag was set}"),
            (LAYOUT, "{name: limit, value: 2, doc: the wait timed out}", "{name: limit, value: 1, doc: the wait timed out}"),
        ],
        [
            ("layout wire", "enum-value", "value 'limit' of enum 'gave'", f"{LAYOUT} enums.gave.values[2].value", f"{LAYOUT} enums.gave.values[2].value"),
            ("layout wire", "enum-value", "value 'stop' of enum 'gave'", f"{LAYOUT} enums.gave.values[1].value", f"{LAYOUT} enums.gave.values[1].value"),
        ],
        1,
    ),
    Case(
        "resized-bit-field",
        [(LAYOUT, "{name: slot, lsb: 16, bits: 8, indexes: ring,", "{name: slot, lsb: 16, bits: 16, indexes: ring,")],
        [
            ("layout wire", "bit-width", "bit field 'slot' of word 'hdr'", f"{LAYOUT} words.hdr.fields[2].bits", f"{LAYOUT} words.hdr.fields[2].bits"),
        ],
        1,
    ),
    Case(
        "moved-bit-field",
        [(LAYOUT, "{name: compute, lsb: 16, bits: 8, enum: end}", "{name: compute, lsb: 24, bits: 8, enum: end}")],
        [
            ("layout wire", "bit-position", "bit field 'compute' of word 'ends'", f"{LAYOUT} words.ends.fields[2].lsb", f"{LAYOUT} words.ends.fields[2].lsb"),
        ],
        1,
    ),
    Case(
        "two-swapped-offsets",
        [(LAYOUT, "      - {name: a0, offset: 12}\n", "      - {name: a0, offset: 20}\n"), (LAYOUT, "      - {name: a1, offset: 20}\n", "      - {name: a1, offset: 12}\n")],
        [
            ("layout wire", "field-offset", "field 'a0' of struct 'command'", f"{LAYOUT} structs.command.fields[3].offset", f"{LAYOUT} structs.command.fields[3].offset"),
            ("layout wire", "field-offset", "field 'a1' of struct 'command'", f"{LAYOUT} structs.command.fields[5].offset", f"{LAYOUT} structs.command.fields[5].offset"),
        ],
        1,
    ),
    Case(
        "constant-value",
        [(LAYOUT, "    value: 1024\n", "    value: 2048\n")],
        [
            ("layout wire", "constant-value", "constant 'limit_cycles'", f"{LAYOUT} constants[0].value", f"{LAYOUT} constants[0].value"),
        ],
        1,
    ),
    Case(
        "removed-flag",
        [(LAYOUT, '      - {name: queue, value: 8, doc: "dispatcher only: the group allocator chooses first"}\n', "")],
        [
            ("layout wire", "enum-value-removed", "flag 'queue' of enum 'flag'", f"{LAYOUT} enums.flag.values[2]", None),
        ],
        1,
    ),
    Case(
        "reordered-array",
        [(LAYOUT, "fields: [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9]", "fields: [a1, a0, a2, a3, a4, a5, a6, a7, a8, a9]")],
        [
            ("layout wire", "array-members", "array 'args' of struct 'command'", f"{LAYOUT} structs.command.arrays[0].fields", f"{LAYOUT} structs.command.arrays[0].fields"),
        ],
        1,
    ),
    Case(
        "region-resized",
        [
            (LAYOUT, '{name: stop, offset: 0x410, size: 0x10, doc: "stop', '{name: stop, offset: 0x410, size: 0x20, doc: "stop'),
            (LAYOUT, "{offset: 0x420, size: 0x20, reserved: true,", "{offset: 0x430, size: 0x10, reserved: true,"),
        ],
        [
            ("layout wire", "region-size", "region 'stop' of block 'control'", f"{LAYOUT} blocks.control.regions[2].size", f"{LAYOUT} blocks.control.regions[2].size"),
        ],
        1,
    ),
    Case(
        "block-alignment",
        [(LAYOUT, "    prefix: control\n    align: 16\n", "    prefix: control\n    align: 8\n")],
        [
            ("layout wire", "block-alignment", "block 'control'", f"{LAYOUT} blocks.control.align", f"{LAYOUT} blocks.control.align"),
        ],
        1,
    ),
    Case(
        "swapped-table-indices",
        [(LAYOUT, "{name: runs, index: 38,", "{name: runs, index: 39,"), (LAYOUT, "{name: passes, index: 39,", "{name: passes, index: 38,")],
        [
            ("layout wire", "table-index", "entry 'passes' of table 'state'", f"{LAYOUT} tables.state.entries[6].index", f"{LAYOUT} tables.state.entries[6].index"),
            ("layout wire", "table-index", "entry 'runs' of table 'state'", f"{LAYOUT} tables.state.entries[5].index", f"{LAYOUT} tables.state.entries[5].index"),
        ],
        1,
    ),
    Case(
        "removed-table",
        [(LAYOUT, TRACE_TABLE + TRACE_TABLE_BODY, "")],
        [
            ("layout wire", "table-removed", "table 'trace'", f"{LAYOUT} tables.trace", None),
        ],
        1,
    ),
    Case(
        "enum-width",
        [(LAYOUT, "    prefix: cb\n    bits: 5\n", "    prefix: cb\n    bits: 6\n")],
        [
            ("layout wire", "enum-width", "enum 'cb'", f"{LAYOUT} enums.cb.bits", f"{LAYOUT} enums.cb.bits"),
        ],
        1,
    ),
    Case(
        "version-going-back",
        [(LAYOUT, "abi_version: {major: 1, minor: 0}", "abi_version: {major: 0, minor: 9}")],
        [
            ("layout wire", "version-backwards", "the ABI version of layout 'komorebi'", f"{LAYOUT} abi_version", f"{LAYOUT} abi_version"),
        ],
        1,
    ),
    # -- layout, source: renames, and what refers to the renamed thing -----------------
    Case(
        "renamed-enum-value",
        [(LAYOUT, "{name: gave_up, value: 2,", "{name: gaveup, value: 2,")],
        [
            ("layout source", "enum-value-renamed", "value 'gave_up' of enum 'end'", f"{LAYOUT} enums.end.values[1]", f"{LAYOUT} enums.end.values[1]"),
        ],
        1,
    ),
    Case(
        "renamed-bit-field",
        [(LAYOUT, "{name: count, lsb: 16, bits: 16, doc: cores in the group}", "{name: cores, lsb: 16, bits: 16, doc: cores in the group}")],
        [
            ("layout source", "bit-field-renamed", "bit field 'count' of word 'group'", f"{LAYOUT} words.group.fields[1]", f"{LAYOUT} words.group.fields[1]"),
            ("layout source", "c-signature", "C function km_group_pack", f"{LAYOUT} words.group", f"{LAYOUT} words.group"),
            ("programs compatible", "python-keyword-added", "Python builder komorebi_abi.programs.mapcollect.collect_command", "programs/mapcollect.yaml handlers[1]", "programs/mapcollect.yaml handlers[1]"),
            ("programs compatible", "python-keyword-added", "Python builder komorebi_abi.programs.mapcollect.map_command", "programs/mapcollect.yaml handlers[0]", "programs/mapcollect.yaml handlers[0]"),
            ("programs source", "python-keyword-removed", "Python builder komorebi_abi.programs.mapcollect.collect_command", "programs/mapcollect.yaml handlers[1]", "programs/mapcollect.yaml handlers[1]"),
            ("programs source", "python-keyword-removed", "Python builder komorebi_abi.programs.mapcollect.map_command", "programs/mapcollect.yaml handlers[0]", "programs/mapcollect.yaml handlers[0]"),
        ],
        1,
    ),
    Case(
        "renamed-struct-field",
        [(LAYOUT, "{name: land3, offset: 48, copy_of: sequence}", "{name: land_c, offset: 48, copy_of: sequence}")],
        [
            ("layout source", "field-renamed", "field 'land3' of struct 'command'", f"{LAYOUT} structs.command.fields[12]", f"{LAYOUT} structs.command.fields[12]"),
        ],
        1,
    ),
    Case(
        "renamed-table",
        [(LAYOUT, TRACE_TABLE, TRACE_TABLE.replace("  trace:", "  trace_words:"))],
        [
            ("layout source", "table-renamed", "table 'trace'", f"{LAYOUT} tables.trace", f"{LAYOUT} tables.trace_words"),
        ],
        1,
    ),
    Case(
        "renamed-enum-that-bit-fields-hold",
        [(LAYOUT, "  end:\n    prefix: end", "  ending:\n    prefix: end")]
        + [(LAYOUT, f"{{name: {f}, lsb: {lsb}, bits: 8, enum: end}}", f"{{name: {f}, lsb: {lsb}, bits: 8, enum: ending}}") for f, lsb in ENDS_FIELDS],
        [
            ("layout source", "enum-renamed", "enum 'end'", f"{LAYOUT} enums.end", f"{LAYOUT} enums.ending"),
        ],
        1,
    ),
    Case(
        "renamed-word-that-a-region-holds",
        [(LAYOUT, "  core:\n    doc: An entry", "  noc:\n    doc: An entry"), (LAYOUT, "slots: 128, word: core,", "slots: 128, word: noc,")],
        [
            ("layout source", "word-renamed", "word 'core'", f"{LAYOUT} words.core", f"{LAYOUT} words.noc"),
        ],
        1,
    ),
    Case(
        "renamed-struct-field-that-copies-name",
        [(LAYOUT, "{name: sequence, offset: 0,", "{name: seq, offset: 0,")]
        + [(LAYOUT, f"{{name: land{i}, offset: {o}, copy_of: sequence}}", f"{{name: land{i}, offset: {o}, copy_of: seq}}") for i, o in LANDS],
        [
            ("layout source", "field-renamed", "field 'sequence' of struct 'command'", f"{LAYOUT} structs.command.fields[0]", f"{LAYOUT} structs.command.fields[0]"),
            ("programs compatible", "python-keyword-added", "Python builder komorebi_abi.programs.mapcollect.collect_command", "programs/mapcollect.yaml handlers[1]", "programs/mapcollect.yaml handlers[1]"),
            ("programs compatible", "python-keyword-added", "Python builder komorebi_abi.programs.mapcollect.map_command", "programs/mapcollect.yaml handlers[0]", "programs/mapcollect.yaml handlers[0]"),
            ("programs source", "python-keyword-removed", "Python builder komorebi_abi.programs.mapcollect.collect_command", "programs/mapcollect.yaml handlers[1]", "programs/mapcollect.yaml handlers[1]"),
            ("programs source", "python-keyword-removed", "Python builder komorebi_abi.programs.mapcollect.map_command", "programs/mapcollect.yaml handlers[0]", "programs/mapcollect.yaml handlers[0]"),
        ],
        1,
    ),
    Case(
        "renamed-region-that-fields-index",
        [
            (LAYOUT, "{name: ring, offset: 0x000,", "{name: slots, offset: 0x000,"),
            (LAYOUT, "{name: slot, lsb: 16, bits: 8, indexes: ring, doc:", "{name: slot, lsb: 16, bits: 8, indexes: slots, doc:"),
            (LAYOUT, "{name: slot, lsb: 16, bits: 8, indexes: ring}", "{name: slot, lsb: 16, bits: 8, indexes: slots}"),
            (LAYOUT, "{name: last, index: 0, count: 16, per: ring,", "{name: last, index: 0, count: 16, per: slots,"),
            (LAYOUT, "{name: reported, index: 16, count: 16, per: ring,", "{name: reported, index: 16, count: 16, per: slots,"),
        ],
        [
            ("layout source", "region-renamed", "region 'ring' of block 'control'", f"{LAYOUT} blocks.control.regions[0]", f"{LAYOUT} blocks.control.regions[0]"),
        ],
        1,
    ),
    Case(
        "renamed-table-that-a-region-holds",
        [(LAYOUT, "  done:\n    prefix: done\n", "  done_slot:\n    prefix: done\n"), (LAYOUT, "        table: done\n", "        table: done_slot\n")],
        [
            ("layout source", "table-renamed", "table 'done'", f"{LAYOUT} tables.done", f"{LAYOUT} tables.done_slot"),
        ],
        1,
    ),
    Case(
        "renamed-struct-that-regions-and-a-program-hold",
        [
            (LAYOUT, "structs:\n  command:\n", "structs:\n  cmd:\n"),
            (LAYOUT, 'struct: command, doc: "ring slots', 'struct: cmd, doc: "ring slots'),
            (LAYOUT, 'struct: command, doc: "the command being run', 'struct: cmd, doc: "the command being run'),
            (PROGRAM, "  struct: command ", "  struct: cmd "),
        ],
        [
            ("layout source", "struct-renamed", "struct 'command'", f"{LAYOUT} structs.command", f"{LAYOUT} structs.cmd"),
        ],
        1,
    ),
    Case(
        "renamed-reserved-region",
        [(LAYOUT, "{name: reserved, offset: 0x400, size: 0x10, reserved: true,", "{name: pad0, offset: 0x400, size: 0x10, reserved: true,")],
        [
            ("layout source", "region-renamed", "region 'reserved' of block 'control'", f"{LAYOUT} blocks.control.regions[1]", f"{LAYOUT} blocks.control.regions[1]"),
        ],
        1,
    ),
    Case(
        "renamed-reserved-struct-field",
        [(LAYOUT, "{name: spare, offset: 60, reserved: true}", "{name: cookie, offset: 60, reserved: true}")],
        [
            ("layout source", "field-renamed", "field 'spare' of struct 'command'", f"{LAYOUT} structs.command.fields[15]", f"{LAYOUT} structs.command.fields[15]"),
        ],
        1, base=A9_RESERVED,
    ),
    Case(
        "struct-field-added-in-reserved-bytes",
        [(file, new, old) for file, old, new in A9_RESERVED],  # the reserved field 'spare' becomes a9 again: its names go
        [
            ("layout compatible", "array-grown", "array 'args' of struct 'command'", f"{LAYOUT} structs.command.arrays[0].fields", f"{LAYOUT} structs.command.arrays[0].fields"),
            ("layout source", "field-renamed", "field 'spare' of struct 'command'", f"{LAYOUT} structs.command.fields[15]", f"{LAYOUT} structs.command.fields[15]"),
        ],
        1, base=A9_RESERVED,
    ),
    # -- layout, compatible -------------------------------------------------------------
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
        [
            ("layout compatible", "region-added", "region 'wake' of block 'control'", None, f"{LAYOUT} blocks.control.regions[3]"),
        ],
        0,
    ),
    Case(
        "anonymous-reserved-gap-named",
        [(LAYOUT, '{offset: 0x420, size: 0x20, reserved: true,', '{name: pad1, offset: 0x420, size: 0x20, reserved: true,')],
        [
            ("layout compatible", "region-added", "region 'pad1' of block 'control'", None, f"{LAYOUT} blocks.control.regions[3]"),
        ],
        0,
    ),
    Case(
        "reserved-struct-field-put-in-use",
        [(LAYOUT, "{name: spare, offset: 60, reserved: true}", "{name: spare, offset: 60}")],
        [
            ("layout compatible", "field-added", "field 'spare' of struct 'command'", f"{LAYOUT} structs.command.fields[15]", f"{LAYOUT} structs.command.fields[15]"),
            ("programs compatible", "python-keyword-added", "Python builder komorebi_abi.programs.mapcollect.collect_command", "programs/mapcollect.yaml handlers[1]", "programs/mapcollect.yaml handlers[1]"),
            ("programs compatible", "python-keyword-added", "Python builder komorebi_abi.programs.mapcollect.map_command", "programs/mapcollect.yaml handlers[0]", "programs/mapcollect.yaml handlers[0]"),
        ],
        0, base=A9_RESERVED,
    ),
    Case(
        "bit-field-added-in-reserved-bits",
        [PRIORITY],
        [
            ("layout compatible", "bit-field-added", "bit field 'priority' of word 'hdr'", None, f"{LAYOUT} words.hdr.fields[3]"),
            ("layout source", "c-signature", "C function km_hdr_pack", f"{LAYOUT} words.hdr", f"{LAYOUT} words.hdr"),
            ("programs compatible", "python-keyword-added", "Python builder komorebi_abi.programs.mapcollect.collect_command", "programs/mapcollect.yaml handlers[1]", "programs/mapcollect.yaml handlers[1]"),
            ("programs compatible", "python-keyword-added", "Python builder komorebi_abi.programs.mapcollect.map_command", "programs/mapcollect.yaml handlers[0]", "programs/mapcollect.yaml handlers[0]"),
        ],
        1,
    ),
    Case(
        "bit-field-added-with-a-major-bump",
        [PRIORITY, MAJOR_BUMP],
        [
            ("layout compatible", "bit-field-added", "bit field 'priority' of word 'hdr'", None, f"{LAYOUT} words.hdr.fields[3]"),
            ("layout source", "c-signature", "C function km_hdr_pack", f"{LAYOUT} words.hdr", f"{LAYOUT} words.hdr"),
            ("programs compatible", "python-keyword-added", "Python builder komorebi_abi.programs.mapcollect.collect_command", "programs/mapcollect.yaml handlers[1]", "programs/mapcollect.yaml handlers[1]"),
            ("programs compatible", "python-keyword-added", "Python builder komorebi_abi.programs.mapcollect.map_command", "programs/mapcollect.yaml handlers[0]", "programs/mapcollect.yaml handlers[0]"),
        ],
        0,
    ),
    Case(
        "table-entry-added-in-a-reserved-word",
        [(LAYOUT, "{name: spare, index: 3, reserved: true, doc: unused}", "{name: writer, index: 3, doc: the last sequence whose writer body returned}")],
        [
            ("layout compatible", "table-entry-added", "entry 'writer' of table 'done'", None, f"{LAYOUT} tables.done.entries[3]"),
        ],
        0,
    ),
    Case(
        "new-struct",
        [(LAYOUT, "structs:\n", "structs:\n  ping:\n    doc: A test struct.\n    size: 8\n    fields:\n      - {name: token, offset: 0}\n      - {name: reply, offset: 4}\n")],
        [
            ("layout compatible", "struct-added", "struct 'ping'", None, f"{LAYOUT} structs.ping"),
        ],
        0,
    ),
    Case(
        "new-constant",
        [(LAYOUT, "  - name: behind_port\n", "  - {name: max_cores, value: 128, doc: cores in a core table}\n  - name: behind_port\n")],
        [
            ("layout compatible", "constant-added", "constant 'max_cores'", None, f"{LAYOUT} constants[1]"),
        ],
        0,
    ),
    Case(
        "new-constant-with-a-minor-bump",
        [(LAYOUT, "  - name: behind_port\n", "  - {name: max_cores, value: 128}\n  - name: behind_port\n"), MINOR_BUMP],
        [
            ("layout compatible", "constant-added", "constant 'max_cores'", None, f"{LAYOUT} constants[1]"),
        ],
        0,
    ),
    Case(
        "enum-value-named-in-a-reserved-value",
        [(LAYOUT, "{value: 16, reserved: true, doc: free}", "{name: retry, value: 16, doc: a retried wait}")],
        [
            ("layout compatible", "enum-value-added", "value 'retry' of enum 'where'", None, f"{LAYOUT} enums.where.values[15]"),
        ],
        0,
    ),
    # -- programs -----------------------------------------------------------------------
    Case(
        "renumbered-handler",
        [(PROGRAM, "  - name: collect\n    id: 2\n", "  - name: collect\n    id: 3\n")],
        [
            ("programs wire", "handler-renumbered", "handler 'collect' of program 'mapcollect'", "programs/mapcollect.yaml handlers[1].id", "programs/mapcollect.yaml handlers[1].id"),
        ],
        1,
    ),
    Case(
        "handler-flags",
        [(PROGRAM, "    flags: [exclusive, result]\n", "    flags: [exclusive]\n")],
        [
            ("programs wire", "handler-flags", "handler 'collect' of program 'mapcollect'", "programs/mapcollect.yaml handlers[1].flags", "programs/mapcollect.yaml handlers[1].flags"),
        ],
        1,
    ),
    Case(
        "removed-handler",
        [(PROGRAM, PROGRAM_COLLECT, "")],
        [
            ("programs wire", "handler-removed", "handler 'collect' of program 'mapcollect'", "programs/mapcollect.yaml handlers[1]", None),
        ],
        1,
    ),
    Case(
        "renumbered-handler-with-a-major-bump",
        [(PROGRAM, "  - name: collect\n    id: 2\n", "  - name: collect\n    id: 3\n"), MAJOR_BUMP],
        [
            ("programs wire", "handler-renumbered", "handler 'collect' of program 'mapcollect'", "programs/mapcollect.yaml handlers[1].id", "programs/mapcollect.yaml handlers[1].id"),
        ],
        0,
    ),
    Case(
        "renamed-handler-argument",
        [(PROGRAM, "{name: tiles, doc: number of tiles across the group}", "{name: ntiles, doc: number of tiles across the group}")],
        [
            ("programs source", "argument-renamed", "argument 'tiles' of handler 'map' of program 'mapcollect'", "programs/mapcollect.yaml handlers[0].args[2]", "programs/mapcollect.yaml handlers[0].args[2]"),
        ],
        1,
    ),
    # -- capabilities -------------------------------------------------------------------
    Case(
        "relation-change-flips-shipped-kernels",
        [FP32_DEST_RULE],
        [
            ("capabilities", "relation", f"relation table gen1_llk.dest_width (dest_width) of targets {sharing('gen1_llk.dest_width')}", "targets/gen1_llk.yaml tables.dest_width.rules[1]", "targets/gen1_llk.yaml tables.dest_width.rules[1]"),
        ],
        0, flips=("eltwise_add_f32", "eltwise_mul_f32"),
    ),
    Case(
        "removed-relation-rule",
        [(RELATIONS, UNRESTRICTED_FP32_RULE, "")],
        [
            ("capabilities", "relation", "relation table gen1_llk.dest_width_unrestricted (dest_width) of target no_target", "targets/gen1_llk.yaml tables.dest_width_unrestricted.rules[0]", "targets/gen1_llk.yaml tables.dest_width_unrestricted.rules"),
        ],
        0,
    ),
    Case(
        "op-semantics-change-flips-a-kernel",
        [("ops/reshape.yaml", "values: {row: reduce_row, col:", "values: {row: reduce_column, col:")],
        [
            ("capabilities", "op-semantics", "op 'tile_reduce'", "ops/reshape.yaml families.reduce.full_fp32.values.row", "ops/reshape.yaml families.reduce.full_fp32.values.row"),
        ],
        0, flips=("reduce_row_bf16",),
    ),
    Case(
        "architecture-fact-flips-a-kernel",
        # A fact no golden pins (Wormhole B0's matmul support is pinned by a golden now checked at validate).
        [("targets/architectures/blackhole.yaml", "reduce_column: {supported: true}", "reduce_column: {supported: false}")],
        [
            ("capabilities", "target-facts", f"targets {of_architecture('blackhole')}", "targets/architectures/blackhole.yaml full_fp32.reduce_column.supported", "targets/architectures/blackhole.yaml full_fp32.reduce_column.supported"),
        ],
        0, flips=("reduce_col_bf16",),
    ),
    Case(
        "runtime-api-change",
        [(
            "targets/runtime_apis.yaml",
            "      current: {num_circular_buffers: 64, kernel_api: current}\n      legacy",
            "      current: {num_circular_buffers: 96, kernel_api: current}\n      legacy",
        )],
        [
            ("capabilities", "runtime-api", "runtime API 'ComputeConfigDescriptor'", "targets/runtime_apis.yaml apis.ComputeConfigDescriptor.runtime_versions.current.num_circular_buffers", "targets/runtime_apis.yaml apis.ComputeConfigDescriptor.runtime_versions.current.num_circular_buffers"),
        ],
        0, flips=("eltwise_sub_f32_sfpu", "joint_resolution_f32", "unary_chain_f32"),
    ),
    Case(
        "kernel-policy-change-flips-its-plan",
        [("kernels/policy_case.yaml", "    policy:\n      options: {enable-fpu-binary-ops: false}\n", "")],
        [],
        0, base=[("kernels/policy_case.yaml", "", POLICY_KERNEL)], flips=("mul_bf16_by_policy",),
    ),
    Case(
        "vocabulary-change",
        [("ops/vocabulary.yaml", "enumerators: {matmul: Matmul,", "enumerators: {matmul: MatMul,")],
        [
            ("capabilities", "vocabulary", "the op vocabulary", "ops/vocabulary.yaml ttlang_cpp.full_fp32_kind.enumerators.matmul", "ops/vocabulary.yaml ttlang_cpp.full_fp32_kind.enumerators.matmul"),
        ],
        0,
    ),
    Case(
        "new-op",
        [("ops/extra.yaml", "", EXTRA_OPS)],
        [
            ("capabilities", "op-added", "op 'tile_no_such_op'", None, "ops/extra.yaml families.extra_unary.names[0]"),
        ],
        0,
    ),
    Case(
        # An op no kernel uses, committed first: removing an op a kernel uses is a spec error.
        "removed-op",
        [("ops/extra.yaml", "", None)],
        [
            ("capabilities", "op-removed", "op 'tile_no_such_op'", "ops/extra.yaml families.extra_unary.names[0]", None),
        ],
        0, base=[("ops/extra.yaml", "", EXTRA_OPS)],
    ),
    Case(
        "new-target",
        [("targets/blackhole_strict.yaml", "", STRICT_TARGET)],
        [
            ("capabilities", "target-added", "target 'blackhole_strict'", None, "targets/blackhole_strict.yaml name"),
        ],
        0,
    ),
    Case(
        "removed-target",
        [("targets/wormhole_b0_gen1_config.yaml", "", None)],
        [
            ("capabilities", "target-removed", "target 'wormhole_b0_gen1_config'", "targets/wormhole_b0_gen1_config.yaml name", None),
        ],
        0,
    ),
    Case(
        "new-kernel",
        [("kernels/elementwise.yaml", "  eltwise_sub_bf16:\n", NEW_KERNEL + "  eltwise_sub_bf16:\n")],
        [
            ("capabilities", "kernel-added", "kernel 'eltwise_add_bf16_copy'", None, "kernels/elementwise.yaml kernels.eltwise_add_bf16_copy"),
        ],
        0,
    ),
]


ABI_FILES = ("abi/", "programs/")  # the layouts' and programs' spec files


def _abi_only(case: Case) -> bool:
    return all(file.startswith(ABI_FILES) for file, _, _ in case.edits)


def _capabilities_only(case: Case) -> bool:
    return not any(file.startswith(ABI_FILES) for file, _, _ in case.edits)


def side_by_side(cases: list[Case]) -> list[tuple[Case, ...]]:
    """The cases by the working tree each is compared in: an edit of capability inputs only
    beside one of layouts and programs only (neither reads what the other changes), every
    other case alone; a case with a base commit of its own is always alone."""
    abi = [c for c in cases if not c.base and _abi_only(c)]
    capabilities = [c for c in cases if not c.base and _capabilities_only(c)]
    pairs = list(zip(abi, capabilities, strict=False))
    paired = {c.id for pair in pairs for c in pair}
    return [*pairs, *((c,) for c in cases if c.id not in paired)]


TREES = side_by_side(CASES)


@pytest.fixture(scope="module")
def base_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("compat"))


@pytest.fixture(scope="module")
def base_side(base_repo: Path) -> tuple[Side, Revision]:
    """The side at main of every case without a base of its own: the real specs, loaded once
    for the module (a side is only read by a comparison)."""
    with contextlib.chdir(base_repo), sides("main", Path("specs")) as (old, _, revision):
        return old, revision


@contextlib.contextmanager
def compare_sides(repo: Path, base: tuple[Side, Revision] | None) -> Iterator[tuple[Side, Side, Revision]]:
    """The two sides `ttlgen compat --against main` compares, from the repository's root;
    ``base``: the side at main when the case did not commit one of its own."""
    with contextlib.chdir(repo):
        if base is None:
            with sides("main", Path("specs")) as found:
                yield found
        else:
            paths = SpecPaths(Path("specs"))
            yield base[0], Side.load(Path("specs"), "in the working tree", paths), base[1]


@pytest.mark.parametrize("cases", TREES, ids=["+".join(c.id for c in cases) for cases in TREES])
def test_compat_classifies_the_edit(cases: tuple[Case, ...], base_repo: Path, base_side: tuple[Side, Revision], tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    base = [edit for case in cases for edit in case.base]  # a case with one is alone
    if base:
        shutil.copytree(base_repo, repo)
        apply(repo, base)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "the base of the case")
    else:
        # Only the working tree: its side at main is the module's, read from base_repo.
        shutil.copytree(base_repo / "specs", repo / "specs")
    for case in cases:
        apply(repo, case.edits)
    # The comparison `ttlgen compat --json` prints (tests/compat/test_compat_reports.py runs
    # the command), made in-process so the side at main is loaded once for the module.
    with compare_sides(repo, None if base else base_side) as (old, new, revision):
        judged = new.paths.relocated(compare(old, new, revision))
        report = json.loads(json.dumps(judged.to_json()))
        code = judged.exit_code
        changes = report["changes"]
        assert isinstance(changes, list)
        found = sorted(_finding(c) for c in changes)
        expected = {case.id: list(case.findings) for case in cases}
        # The two sides as the models see them, for what the report must say about them.
        for case in cases:
            if any(category == "capabilities" for category, *_ in case.findings) or case.flips:
                flipped = flipped_kernels(old.plan, new.plan)
                assert set(case.flips) <= {name for name, _ in flipped}, f"{case.id} no longer changes the plan of {case.flips}"
                expected[case.id] += [("capabilities", "kernel-plan", f"kernel {name!r}", at, at) for name, at in flipped]
        identifiers = _identifiers(old), _identifiers(new)
    every = [finding for findings in expected.values() for finding in findings]
    assert found == sorted(every), _unexpected(found, expected, report)
    # A case's exit code: 1 exactly when one of its changes is breaking (Report.exit_code).
    for case in cases:
        own = [c for c in changes if _finding(c) in expected[case.id]]
        assert int(any(c["status"] == "breaking" for c in own)) == case.exit_code, (case.id, own)
    assert code == max(case.exit_code for case in cases), report
    assert_positions(repo, report, at_ref=None if base else base_repo)
    assert_vanished_names_are_reported(*identifiers, changes)


def _finding(change: dict[str, object]) -> Finding:
    return (str(change["category"]), str(change["kind"]), str(change["subject"]), located(change["before"]), located(change["after"]))


def _unexpected(found: list[Finding], expected: dict[str, list[Finding]], report: object) -> str:
    """What differs, each finding missing under the case that expects it."""
    every = Counter(finding for findings in expected.values() for finding in findings)
    missing, extra = every - Counter(found), Counter(found) - every
    lines = [f"{case}: missing {finding}" for case, findings in expected.items() for finding in findings if missing[finding]]
    lines += [f"reported, expected by no case: {finding}" for finding in extra.elements()]
    return "\n".join([*lines, json.dumps(report, indent=1)])


def flipped_kernels(before: ProjectPlan, after: ProjectPlan) -> list[tuple[str, str]]:
    """The kernels whose plan differs between two plans of the specs, each with its location
    (``file key.path``): the kernel-plan findings an edit must get, whichever kernels the
    specs hold. Planned here, apart from compat, from what a kernel's plan is made of."""

    def facets(plan: ProjectPlan) -> dict[str, tuple[object, ...]]:
        return {k.kernel.name: (k.strategies, k.dest_width, k.sync, k.plan_json, k.compute_config) for k in plan.kernels}

    old, new = facets(before), facets(after)
    where = {k.kernel.name: f"{k.kernel.source.removeprefix('specs/')} kernels.{k.kernel.name}" for k in after.kernels}
    return [(name, where[name]) for name in sorted(old.keys() & new.keys()) if old[name] != new[name]]


def _identifiers(side: Side) -> dict[Scope, dict[str, str]]:
    """Every generated identifier by scope, and what it belongs to."""
    namespaces = scan(side.project.layouts, side.project.programs)
    return {scope: {name: source.what for name, source in owned.items()} for scope, owned in namespaces.owners.items()}


def _names(what: str) -> tuple[str, ...]:
    """The names of a thing and of what holds it: ``the shift of bit field 'slot' of word
    'hdr'`` is ('slot', 'hdr'), under the word 'hdr' as much as under the field."""
    return tuple(re.findall(r"'([^']*)'", what))


def _within(part: tuple[str, ...], whole: tuple[str, ...]) -> bool:
    return any(whole[i : i + len(part)] == part for i in range(len(whole) - len(part) + 1))


def assert_vanished_names_are_reported(
    before: dict[Scope, dict[str, str]], after: dict[Scope, dict[str, str]], changes: list[dict[str, object]]
) -> None:
    """A generated name the edit makes vanish breaks the source that uses it, so compat must
    report a breaking change of what it belonged to (or of something that holds it)."""
    # A scope that is gone (the parameters of a removed builder) went with what holds it.
    gone = {
        scope.show(name): what
        for scope, owned in before.items()
        if scope in after
        for name, what in owned.items()
        if name not in after[scope]
    }
    breaking = [_names(str(c["subject"])) for c in changes if str(c["category"]).endswith((" wire", " source"))]
    unreported = {name: what for name, what in gone.items() if not any(_within(b, _names(what)) for b in breaking if b)}
    assert not unreported, f"generated names gone without a breaking finding: {unreported}"
