"""Every diagnostic of the pass, with TT-Lang-compatible texts and both requirements."""

from __future__ import annotations

from pathlib import Path

from tests.resolver.kit import dfb, engine, failure_of, kernel, resolve, tables_of, val


def messages(result: object) -> list[tuple[str | None, int | None, str]]:
    return [(e.op, e.operand, e.message) for e in failure_of(result).errors]


def notes(result: object) -> list[tuple[str | None, str]]:
    return [(n.op, n.message) for n in failure_of(result).errors[0].notes]


def test_32bit_requirement_against_disabled_fp32() -> None:
    result = resolve(kernel({0: "f32"}, ("c", "copy_tile", [dfb(0)])), options={"fp32-dest-acc-en": "disabled"})
    assert messages(result) == [("c", 0, "requires 32-bit destination elements, but fp32 destination accumulation is explicitly disabled")]


def test_32bit_result_against_disabled_fp32_attribute() -> None:
    k = kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]), ("e", "tile_exp", [val("c")], {"result": "f32"}))
    result = resolve(k, attributes={"fp32_dest_acc_en": False})
    assert messages(result) == [("e", None, "requires 32-bit destination elements, but fp32 destination accumulation is explicitly disabled")]


def test_no_kernel_wide_width_names_both_ops() -> None:
    k = kernel({0: "bf16", 1: "f32"}, ("b", "tile_bcast", [dfb(0)], {"bcast": "scalar"}), ("c", "copy_tile", [dfb(1)]))
    result = resolve(k, "wormhole_b0")
    assert messages(result) == [("c", 0, "requires 32-bit destination elements, but no kernel-wide destination width supports all tile operations")]
    assert notes(result) == [("b", "the target does not support 32-bit destination elements for tile_bcast with 'bf16' elements")]
    conflict = failure_of(result).conflict
    assert conflict.requirement.op == "c" and conflict.established_by.op == "b"


def test_width_conflict_names_32bit_op_whatever_the_walk_order() -> None:
    k = kernel({0: "bf16", 1: "f32"}, ("c", "copy_tile", [dfb(1)]), ("b", "tile_bcast", [dfb(0)], {"bcast": "col"}))
    result = resolve(k, "blackhole")
    assert messages(result)[0][0] == "c"
    assert notes(result) == [("b", "the target does not support 32-bit destination elements for tile_bcast with 'bf16' elements")]


def test_explicit_32bit_unsupported_by_ops_is_function_level() -> None:
    k = kernel({0: "bf16"}, ("b", "tile_bcast", [dfb(0)], {"bcast": "row"}))
    result = resolve(k, "blackhole", options={"fp32-dest-acc-en": "enabled"})
    assert messages(result) == [(None, None, "explicit 32-bit destination elements are unsupported by the kernel's tile operations")]
    assert notes(result) == [("b", "the target does not support 32-bit destination elements for tile_bcast with 'bf16' elements")]


def test_incompatible_unpack_modes_note_first_consumer() -> None:
    k = kernel(
        {0: "f32", 1: "f32"},
        ("r", "tile_reduce", [dfb(1), dfb(0)], {"reduce_dim": "scalar"}),
        ("e", "tile_exp", [dfb(0)]),
    )
    result = resolve(k)
    assert messages(result) == [("e", 0, "dataflow buffer 0 requires incompatible unpack modes in one kernel")]
    assert notes(result) == [("r", "operand 1 establishes the conflicting unpack mode")]
    assert failure_of(result).errors[0].notes[0].operand == 1


def test_unpack_attribute_excluding_a_required_index() -> None:
    k = kernel({0: "f32", 1: "f32"}, ("e", "tile_exp", [dfb(1)]))
    result = resolve(k, attributes={"ttl.unpack_to_dest_fp32": [0]})
    assert messages(result) == [("e", 0, "dataflow buffer 1 requires unpack-to-DST-f32 mode, but ttl.unpack_to_dest_fp32 excludes this index")]


def test_unpack_attribute_including_a_default_index() -> None:
    k = kernel({0: "f32"}, ("t", "tile_transpose", [dfb(0)]))
    result = resolve(k, attributes={"ttl.unpack_to_dest_fp32": [0]})
    assert messages(result) == [("t", 0, "dataflow buffer 0 requires default unpack mode, but ttl.unpack_to_dest_fp32 includes this index")]


def test_explicit_fpu_with_disabled_fpu_policy() -> None:
    k = kernel({0: "bf16", 1: "bf16"}, ("s", "tile_add", [dfb(0), dfb(1)], {"strategy": "fpu"}))
    result = resolve(k, options={"enable-fpu-binary-ops": False})
    assert messages(result) == [("s", None, "explicit FPU strategy conflicts with disabled FPU binary policy")]


def test_explicit_strategy_illegal_for_operands() -> None:
    k = kernel({0: "bf16", 1: "bf16"}, ("s", "tile_add", [dfb(0), dfb(1, (1, 1))], {"strategy": "fpu"}))
    assert messages(resolve(k)) == [("s", None, "explicit ttl.tile_execution_strategy is not legal for its operands")]


def test_strategy_on_op_without_alternatives() -> None:
    k = kernel({0: "bf16"}, ("e", "tile_exp", [dfb(0)], {"strategy": "sfpu"}))
    assert messages(resolve(k)) == [("e", None, "ttl.tile_execution_strategy is only valid on tile operations with execution-strategy alternatives")]


def test_dfb_index_outside_target_capacity() -> None:
    k = kernel({40: "bf16"}, ("c", "copy_tile", [dfb(40)]))
    assert messages(resolve(k, "wormhole_b0")) == [("c", 0, "uses dataflow buffer index 40 outside the supported range [0, 31]")]
    assert messages(resolve(k)) == [("c", 0, "uses dataflow buffer index 40 outside the supported range [0, 31]")]
    assert isinstance(resolve(k, "blackhole"), engine.Plan)


def test_unpack_attribute_index_outside_capacity() -> None:
    k = kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]))
    result = resolve(k, "blackhole", attributes={"ttl.unpack_to_dest_fp32": [64]})
    assert messages(result) == [(None, None, "ttl.unpack_to_dest_fp32 uses dataflow buffer index 64 outside the supported range [0, 63]")]


def test_invalid_tri_state_values_are_reported_together() -> None:
    k = kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]))
    result = resolve(k, options={"fp32-dest-acc-en": "maybe", "dst-full-sync-en": "often"})
    assert messages(result) == [
        (None, None, "invalid fp32-dest-acc-en value 'maybe'; expected auto, enabled, or disabled"),
        (None, None, "invalid dst-full-sync-en value 'often'; expected auto, enabled, or disabled"),
    ]


def test_invalid_boolean_option() -> None:
    k = kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]))
    assert messages(resolve(k, options={"reduce-full-fp32": "sometimes"})) == [
        (None, None, "invalid reduce-full-fp32 value 'sometimes'; expected true or false")
    ]


def test_unknown_tile_operation_has_no_execution_semantics() -> None:
    k = kernel({0: "bf16"}, ("x", "tile_frobnicate", [dfb(0)]))
    assert messages(resolve(k)) == [("x", None, "has no tile execution semantics: 'tile_frobnicate' is not a known tile operation")]


def test_unbound_dataflow_buffer_is_an_error() -> None:
    k = kernel({0: "bf16"}, ("c", "copy_tile", [dfb(5)]))
    assert messages(resolve(k)) == [("c", 0, "reads dataflow buffer 5, which has no finalized element type in this kernel")]


def test_dataflow_buffer_operand_without_buffer_is_an_error() -> None:
    k = kernel({0: "bf16"}, ("c", "copy_tile", [dfb(0)]), ("t", "tile_transpose", [val("c")]))
    assert messages(resolve(k)) == [("t", 0, "requires a dataflow buffer, but has no finalized DFB index")]


def test_failure_carries_typed_conflict_evidence() -> None:
    k = kernel({0: "f32"}, ("t", "tile_transpose", [dfb(0)]), ("e", "tile_exp", [dfb(0)]))
    conflict = failure_of(resolve(k)).conflict
    assert conflict.kind is engine.ConflictKind.UNPACK_MODE
    assert (conflict.requirement.op, conflict.requirement.dfb, conflict.requirement.route) == ("e", 0, engine.Route.DST)
    assert (conflict.established_by.op, conflict.established_by.route) == ("t", engine.Route.DFB)
    assert engine.diagnose(conflict) == failure_of(resolve(k)).errors[0]


def test_element_type_without_any_supported_width(spec_copy: Path) -> None:
    # No shipped target lacks a width for a type; a spec edit makes one that does.
    relations = spec_copy / "targets" / "gen1_llk.yaml"
    text = relations.read_text()
    marker = "      - when: {element_bits: [32]}\n        allow: [32]\n      - allow: [16, 32]\n\n  dest_width_unrestricted:"
    assert marker in text
    relations.write_text(text.replace(marker, "      - when: {element: [u16]}\n        allow: []\n" + marker))
    edited = tables_of(spec_copy)
    k = engine.KernelDescription({0: edited.element_type.U16}, (engine.TileOp("c", "copy_tile", (engine.DfbOperand(0),)),))
    result = engine.Catalog(edited.tables).resolve_kernel(k, target="blackhole")
    assert isinstance(result, engine.ResolveFailure)
    assert [(e.op, e.message) for e in result.errors] == [("c", "has no target-supported destination element width for 'u16' elements")]
