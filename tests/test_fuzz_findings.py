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
