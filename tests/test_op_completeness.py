"""An op's facts are complete at validate time, and a missing one names where it goes.

The bad-spec cases (tests/fixtures/bad_specs) show each message a kernel gets for an op
without semantics, without a spelling, absent at its target's API level, without an emulator
binding, or used on an element type its family does not take. This file covers what those
cases cannot: the message for an unknown API function depends on whether the pinned
release's headers are at hand (here a stand-in of the upstream cache), and the producer-
routed operand of tile_accumulate as the resolver sees it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.spec_patch import Edit, apply_edits
from ttlgen import cache
from ttlgen.model.tt_metal_api import Release
from ttlgen.upstream.compile import host_only

# A spelling that names a function no API level declares, and no release could (tile_exp's init,
# renamed after tile_no_such_op).
MISSPELT_INIT = Edit("ops/tt_metal_spelling.yaml", 'sfpu: {init: exp_tile_init(), call: "exp_tile({dst})"}', 'sfpu: {init: no_such_op_tile_init(), call: "exp_tile({dst})"}')


def _release(project_release: Release | None) -> Release:
    assert project_release is not None, "the shipped levels pin a release"
    return project_release


def _fake_release(root: Path, release: Release, headers: dict[str, str]) -> None:
    """An extraction of ``release`` in the upstream cache at ``root``, holding ``headers``
    (relative to tt_metal/hw/inc/), complete as `ttlgen upstream fetch` leaves one."""
    tree = root / "headers" / release.sha256
    for relative, text in headers.items():
        path = tree / "ttnn" / "tt_metal" / "hw" / "inc" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (tree / "MANIFEST.json").write_text(json.dumps({"version": 1, "files": {}}), encoding="utf-8")


def _levels() -> list[tuple[str, Release]]:
    from tests.conftest import real_project

    return [(level.level, _release(level.release)) for level in real_project().api.levels]


def test_an_unknown_function_the_release_declares_is_named_with_its_header_and_the_import(
    spec_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    upstream = tmp_path / "upstream"
    levels = _levels()
    for _, release in levels:
        _fake_release(upstream, release, {"api/compute/eltwise_unary/no_such_op.h": "ALWI void no_such_op_tile_init() {}\n"})
    monkeypatch.setenv(cache.UPSTREAM_ENV, str(upstream))
    apply_edits(spec_copy, [MISSPELT_INIT], case="an init the level does not declare")
    result = run_cli("validate", "--specs", spec_copy)
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if "no_such_op_tile_init" in line]
    assert len(lines) == len(levels)
    for (level, release), line in zip(sorted(levels), lines, strict=True):
        assert line.startswith("specs/ops/tt_metal_spelling.yaml:")
        assert f"unknown function 'no_such_op_tile_init' at API level '{level}'" in line
        assert f"specs/tt_metal/{level}.yaml does not declare it, but {release.name} does (api/compute/eltwise_unary/no_such_op.h)" in line
        assert f"ttlgen upstream import --level {level} --add no_such_op_tile_init" in line
        assert "did you mean" not in line  # the fix is to declare it, not to pick another name


def test_an_unknown_function_the_release_lacks_is_a_misspelling_with_suggestions(
    spec_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    upstream = tmp_path / "upstream"
    levels = _levels()
    for _, release in levels:
        _fake_release(upstream, release, {"api/compute/eltwise_unary/exp.h": "ALWI void exp_tile_init() {}\n"})
    monkeypatch.setenv(cache.UPSTREAM_ENV, str(upstream))
    apply_edits(spec_copy, [MISSPELT_INIT], case="an init the level does not declare")
    result = run_cli("validate", "--specs", spec_copy)
    lines = [line for line in result.stderr.splitlines() if "no_such_op_tile_init" in line]
    assert len(lines) == len(levels)
    for (level, release), line in zip(sorted(levels), lines, strict=True):
        assert f"neither specs/tt_metal/{level}.yaml nor {release.name}'s headers declare it (did you mean" in line


def test_without_the_releases_headers_the_message_says_it_cannot_tell(
    spec_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(cache.UPSTREAM_ENV, str(tmp_path / "empty"))
    apply_edits(spec_copy, [MISSPELT_INIT], case="an init the level does not declare")
    result = run_cli("validate", "--specs", spec_copy)
    line = next(line for line in result.stderr.splitlines() if "no_such_op_tile_init" in line)
    assert "is unknown here (its headers are not fetched: `ttlgen upstream fetch`)" in line


def _resolved_unpack_set(tmp_path: Path, contribution: str) -> str:
    """The unpack-to-DST set of an accumulation into a copy of f32 buffer 0 of
    ``contribution``'s ops (the last one's result is the contribution)."""
    description = tmp_path / "accumulate.yaml"
    description.write_text(
        "target: blackhole\n"
        "dfbs: {0: f32, 1: f32}\n"
        "ops:\n"
        "  - {id: a, op: copy_tile, operands: [{dfb: 0}]}\n"
        f"{contribution}",
        encoding="utf-8",
    )
    from tests.conftest import SPECS

    result = run_cli("resolve", description, "--specs", SPECS)
    assert result.exit_code == 0, result.stderr
    return next(line.split("=", 1)[1].strip() for line in result.stdout.splitlines() if "ttl.unpack_to_dest_fp32" in line)


def test_a_contribution_read_from_a_buffer_is_routed_dataflow_buffer(tmp_path: Path) -> None:
    # TT-Lang's tile_accumulate: the contribution is routed Dst when a tile op produces it,
    # DataflowBuffer otherwise. An f32 buffer read through a source register keeps its
    # default unpack mode; one read into DST (by tile_abs) unpacks to DST in fp32.
    read = "  - {id: acc, op: tile_accumulate, operands: [{value: a}, {dfb: 1}]}\n"
    computed = "  - {id: b, op: tile_abs, operands: [{dfb: 1}]}\n  - {id: acc, op: tile_accumulate, operands: [{value: a}, {value: b}]}\n"
    assert _resolved_unpack_set(tmp_path, read) == "[0]"
    assert _resolved_unpack_set(tmp_path, computed) == "[0, 1]"


def test_the_compile_check_discounts_only_the_host_compilers_own_errors() -> None:
    left, right = "\u2018", "\u2019"  # g++'s quotes in a UTF-8 locale
    pragma = f"x.h:179:20: error: {left}#pragma GCC unroll{right} requires an assignment-expression that evaluates to a non-negative integral constant less than 65535\n"
    other = f"kernel.cpp:3:5: error: {left}no_such_tile{right} was not declared in this scope\n"
    assert host_only(pragma)
    assert host_only(pragma.replace(left, "'").replace(right, "'"))  # the C locale's quotes
    assert not host_only(pragma + other)
    assert not host_only(other)
    assert not host_only("")
    assert not host_only(pragma + "compilation terminated due to -fmax-errors=10.\n")


def test_the_compile_check_discounts_a_literal_false_assertion_at_its_template_definition(tmp_path: Path) -> None:
    # g++ before 13 fails `static_assert(false, ...)` where a template defines it, even in a
    # discarded `if constexpr` branch (P2593R1); tt-llk's ckernel_sfpu_fill.h writes one. A
    # static assertion of any other condition is a real failure.
    header = tmp_path / "ckernel_sfpu_fill.h"
    header.write_text("template <int M> void f() {\n    if constexpr (M == 0) {\n    } else {\n        static_assert(false, \"M must be 0\");\n    }\n}\n", encoding="utf-8")
    other = tmp_path / "other.h"
    other.write_text("static_assert(sizeof(long) == 8, \"64-bit\");\n", encoding="utf-8")
    literal_false = f"{header}:4:23: error: static assertion failed: M must be 0\n"
    assert host_only(literal_false)
    assert host_only(literal_false.replace(f"{header}", header.name), tmp_path)  # relative to where the compile ran
    assert not host_only(f"{other}:1:27: error: static assertion failed: 64-bit\n")
    assert not host_only(f"{tmp_path / 'gone.h'}:4:23: error: static assertion failed: M must be 0\n")


def test_a_binding_of_a_function_only_the_release_declares_says_where_to_declare_it(
    spec_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    upstream = tmp_path / "upstream"
    levels = _levels()
    for _, release in levels:
        _fake_release(upstream, release, {"api/compute/eltwise_unary/no_such_op.h": "ALWI void no_such_op_tile_init() {}\n"})
    monkeypatch.setenv(cache.UPSTREAM_ENV, str(upstream))
    emulation = spec_copy / "tt_metal" / "emulation.yaml"
    emulation.write_text(emulation.read_text(encoding="utf-8").rstrip("\n") + "\n  no_such_op_tile_init: api::no_op()\n", encoding="utf-8")
    result = run_cli("validate", "--specs", spec_copy)
    (line,) = [line for line in result.stderr.splitlines() if "no_such_op_tile_init" in line]
    assert line.startswith("specs/tt_metal/emulation.yaml:") and "no API level declares 'no_such_op_tile_init': declare it in" in line
    for level, release in levels:
        assert f"specs/tt_metal/{level}.yaml ({release.name} declares it in api/compute/eltwise_unary/no_such_op.h" in line
        assert f"`ttlgen upstream import --level {level} --add no_such_op_tile_init`" in line
    assert "did you mean" not in line


def _resolve(tmp_path: Path, ops: str) -> tuple[int, str]:
    from tests.conftest import SPECS

    description = tmp_path / "typecast.yaml"
    description.write_text(f"target: blackhole\ndfbs: {{0: bf16}}\nops:\n  - {{id: a, op: copy_tile, operands: [{{dfb: 0}}]}}\n{ops}", encoding="utf-8")
    result = run_cli("resolve", description, "--specs", SPECS)
    return result.exit_code, result.stdout + result.stderr


def test_a_typecasts_result_has_the_element_type_its_attribute_names(tmp_path: Path) -> None:
    # A bf16 tile fits a 16-bit DST; cast to f32 in DST, it needs 32-bit DST elements.
    code, plain = _resolve(tmp_path, "")
    assert code == 0 and "fp32_dest_acc_en = false" in plain
    code, widened = _resolve(tmp_path, "  - {id: t, op: tile_typecast, operands: [{value: a}], attrs: {to: f32}}\n")
    assert code == 0 and "fp32_dest_acc_en = true" in widened
    code, unknown = _resolve(tmp_path, "  - {id: t, op: tile_typecast, operands: [{value: a}], attrs: {to: bf61}}\n")
    assert code == 1 and "attribute 'to' names an unknown element type 'bf61'; known: bf16," in unknown


def test_a_header_that_only_calls_a_function_does_not_declare_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ttlgen.release_headers import NOT_FETCHED, declaring_header

    release = _levels()[0][1]
    monkeypatch.setenv(cache.UPSTREAM_ENV, str(tmp_path / "upstream"))
    assert declaring_header(release.sha256, ("api/compute/",), "no_such_op_tile") is NOT_FETCHED
    _fake_release(
        tmp_path / "upstream", release,
        {"api/compute/a.h": "ALWI void caller() {\n    return no_such_op_tile(0);\n}\n", "api/compute/b/c.h": "ALWI void exp2_tile(uint32_t idst) {}\n"},
    )
    assert declaring_header(release.sha256, ("api/compute/",), "no_such_op_tile") is None
    assert declaring_header(release.sha256, ("api/compute/",), "caller") == "api/compute/a.h"
    assert declaring_header(release.sha256, ("api/compute/",), "exp2_tile") == "api/compute/b/c.h"
    assert declaring_header(release.sha256, ("api/dataflow/",), "exp2_tile") is None  # another kind's roots
