"""Each API level pins the upstream release it follows; a malformed pin is one located line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from upstream_helpers import project

from tests.conftest import run_cli
from ttlgen.model.tt_metal_api import normalized_distribution, wheel_problem


def test_every_api_level_of_the_specs_pins_a_release_of_its_own_wheel() -> None:
    levels = project().api.levels
    assert levels
    for level in levels:
        release = level.release
        assert release is not None, f"API level {level.level} ({level.source}) pins no release"
        assert wheel_problem(release.package, release.version, release.wheel) is None
        assert release.wheel.startswith(f"{normalized_distribution(release.package)}-{release.version}-")
        assert re.fullmatch(r"[0-9a-f]{64}", release.sha256)


def _pin_line(spec: Path, key: str) -> tuple[int, str]:
    """(line number, text) of the pin's ``key:`` line in an API level spec."""
    lines = spec.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("release:"))
    index = next(i for i in range(start + 1, len(lines)) if lines[i].strip().startswith(f"{key}:"))
    return index + 1, lines[index]


def _edit_pin(spec: Path, key: str, value: str) -> int:
    number, line = _pin_line(spec, key)
    lines = spec.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[number - 1] = f"{line.split(':')[0]}: {value}\n"
    spec.write_text("".join(lines), encoding="utf-8")
    return number


def _level_spec(specs: Path) -> Path:
    source = project().api.levels[0].source
    return specs / Path(source).relative_to("specs")


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("wheel", "{package}-9.9.9-cp312-cp312-manylinux_2_34_x86_64.whl", r"is a wheel of .* 9\.9\.9, not of the pinned"),
        ("wheel", "{package}-{version}-cp311-cp311-manylinux_2_34_x86_64.whl", r"is not built for CPython 3\.12"),
        ("wheel", "{package}-{version}-cp312-cp312-macosx_14_0_arm64.whl", r"does not run on manylinux_2_34_x86_64"),
        ("sha256", "not-a-hash", r"must be the wheel's sha256: 64 lower-case hexadecimal digits"),
    ],
)
def test_a_malformed_pin_is_one_error_at_its_line(spec_copy: Path, key: str, value: str, message: str) -> None:
    spec = _level_spec(spec_copy)
    release = project().api.levels[0].release
    assert release is not None
    number = _edit_pin(spec, key, value.format(package=release.package, version=release.version))
    result = run_cli("validate")
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if not line.startswith("ttlgen:")]
    assert len(errors) == 1, result.stderr
    shown = spec.relative_to(spec_copy.parent).as_posix()
    assert re.match(rf"{re.escape(shown)}:{number}:\d+: release\.{key}: ", errors[0]), errors[0]
    assert re.search(message, errors[0]), errors[0]
