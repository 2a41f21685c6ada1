"""Regressions the spec fuzzer (tests/spec_fuzz.py) found that a bad-spec overlay cannot show:
each is a located error (exit 2) at a place that exists, in bounded time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import run_cli
from ttlgen.spec.limits import FILE_BYTES_LIMIT


def rejected(specs: Path) -> str:
    start = time.perf_counter()
    result = run_cli("validate", "--specs", specs)
    assert time.perf_counter() - start < 10
    assert result.exit_code == 2, result.stdout
    assert "Traceback" not in result.stderr
    return result.stderr


def test_a_yaml_file_cut_short_is_reported_on_its_last_line_not_after_it(spec_copy: Path) -> None:
    target = spec_copy / "targets" / "architectures" / "quasar.yaml"
    text = target.read_text(encoding="utf-8")
    cut = text[: text.index("runtime_name:") + len("runtime_nam")]
    target.write_text(cut, encoding="utf-8")
    lines = cut.split("\n")
    assert rejected(spec_copy).startswith(f"specs/targets/architectures/quasar.yaml:{len(lines)}:")


def test_a_file_over_the_size_limit_is_refused_where_the_limit_falls_before_parsing(spec_copy: Path) -> None:
    line = "# " + "x" * 97 + "\n"  # 100 bytes
    count = FILE_BYTES_LIMIT // len(line) + 10
    (spec_copy / "ops" / "huge.yaml").write_text("spec: ttlgen.ops/v1\n" + line * count, encoding="utf-8")
    beyond = FILE_BYTES_LIMIT - len("spec: ttlgen.ops/v1\n")
    expected_line = 2 + beyond // len(line)
    assert rejected(spec_copy).startswith(f"specs/ops/huge.yaml:{expected_line}:{beyond % len(line) + 1}: the file is larger than 1 MiB")


def test_an_unreadable_spec_is_a_located_error(spec_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Refused as a permission error would be (the suite may run as root, who reads anything).
    target = (spec_copy / "ops" / "matmul.yaml").resolve()
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.resolve() == target:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    assert rejected(spec_copy).startswith("specs/ops/matmul.yaml:1:1: cannot read the file: Permission denied")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1) if needle in line)


def test_an_enumerator_value_beyond_its_underlying_type_is_refused_at_the_value(spec_copy: Path) -> None:
    current = spec_copy / "tt_metal" / "current.yaml"
    _edit(current, "Reverse: 1}, scoped: true, underlying: uint8_t", "Reverse: 300}, scoped: true, underlying: uint8_t")
    message = rejected(spec_copy)
    assert message.startswith(f"specs/tt_metal/current.yaml:{_line_of(current, 'Reverse: 300')}:")
    assert "value 300 of SrcOrder::Reverse does not fit its underlying type uint8_t (0..255)" in message


def test_an_underlying_type_that_is_no_integer_type_is_refused_with_the_valid_ones(spec_copy: Path) -> None:
    _edit(spec_copy / "tt_metal" / "current.yaml", "underlying: uint8_t", "underlying: uint9_t")
    assert "'uint9_t' is not an integer type an enumeration can have" in rejected(spec_copy)


def test_dropping_an_enumerator_the_emulator_maps_is_refused_on_the_enumeration(spec_copy: Path) -> None:
    # The glue compares against PoolType::MAX; generated emulator headers would not compile.
    current = spec_copy / "tt_metal" / "current.yaml"
    _edit(current, "PoolType: {enum: {SUM: 0, AVG: 1, MAX: 2,", "PoolType: {enum: {SUM: 0, AVG: 1, MAXIMUM: 2,")
    message = rejected(spec_copy)
    # The spelling's uses of PoolType::MAX are refused too (at the spelling spec, which sorts
    # first); the glue's use is refused on the enumeration itself.
    (glue,) = [line for line in message.splitlines() if "the emulator's glue uses" in line]
    assert glue.startswith(f"specs/tt_metal/current.yaml:{_line_of(current, 'PoolType:')}:")
    assert "enumeration PoolType of level 'current' has no MAX, which the emulator's glue uses (ttlemu/compute.hpp)" in glue
    assert glue.endswith("enumerators: SUM, AVG, MAXIMUM, MIN")


def test_a_binding_to_a_routine_the_glue_lacks_is_refused_with_a_suggestion(spec_copy: Path) -> None:
    emulation = spec_copy / "tt_metal" / "emulation.yaml"
    _edit(emulation, '"compute::sfpu_unary(function, idst)"}', '"compute::sfpu_unry(function, idst)"}')
    message = rejected(spec_copy)
    assert message.startswith(f"specs/tt_metal/emulation.yaml:{_line_of(emulation, 'sfpu_unry')}:")
    assert "the glue declares no routine ttlemu::compute::sfpu_unry (did you mean 'compute::sfpu_unary'" in message


def test_a_binding_computing_math_the_specs_do_not_state_is_refused_naming_the_math_spec(spec_copy: Path) -> None:
    emulation = spec_copy / "tt_metal" / "emulation.yaml"
    _edit(emulation, "exp_tile: {computes: exp,", "exp_tile: {computes: expo,")
    message = rejected(spec_copy)
    assert message.startswith(f"specs/tt_metal/emulation.yaml:{_line_of(emulation, 'computes: expo')}:")
    assert "no math is stated for 'expo' (did you mean 'exp'?): add it to specs/ops/math.yaml" in message


def test_a_binding_computing_an_fpu_operation_the_glue_lacks_is_refused_with_the_known_ones(spec_copy: Path) -> None:
    # The FPU's operations are the runtime's datapath: `function` names the glue's entry.
    _edit(spec_copy / "tt_metal" / "emulation.yaml", "add_tiles: {computes: add,", "add_tiles: {computes: max,")
    message = rejected(spec_copy)
    assert "'max' is not a function of ttlemu::math::fpu_binary; known: add, mul, sub" in message


def test_a_glue_header_that_does_not_exist_is_refused_with_the_headers_that_do(spec_copy: Path) -> None:
    _edit(spec_copy / "tt_metal" / "emulation.yaml", "compute: ttlemu/compute.hpp", "compute: ttlemu/compte.hpp")
    message = rejected(spec_copy)
    assert "no glue header 'ttlemu/compte.hpp' (did you mean 'ttlemu/compute.hpp'?)" in message


def test_a_type_the_glue_does_not_implement_is_refused(spec_copy: Path) -> None:
    _edit(spec_copy / "tt_metal" / "emulation.yaml", "types: [DataFormat,", "types: [DataFormats,")
    assert "the glue implements no type ttlemu::types::DataFormats (did you mean 'DataFormat'?)" in rejected(spec_copy)
