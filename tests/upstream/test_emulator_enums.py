"""The emulator's enumerations are the pinned release's: the same scope, underlying type,
enumerators and values, checked by compiling static assertions written from the release's
parsed headers against the emulator's headers of each level."""

from __future__ import annotations

import subprocess
from pathlib import Path

from upstream_helpers import project, release_api

from tests.conftest import GENERATED, REPO
from ttlgen.model.tt_metal_api import KernelKind

GLUE = REPO / "ttlgen" / "device" / "include"


def _assertions(level_name: str) -> list[str]:
    level = project().api.level(level_name)
    assert level is not None
    api = release_api(level_name)
    lines = []
    for kind in level.types:
        if not kind.is_enum:
            continue
        (upstream,) = {e for k in KernelKind for e in api.kind(k).enum(kind.name) if e.namespace in (None, "ckernel")}
        name = kind.name
        # A scoped enumeration does not convert to an integer implicitly.
        lines.append(f"static_assert(std::is_convertible_v<{name}, int> == {'false' if upstream.scoped else 'true'}, \"{name}: scope\");")
        if upstream.underlying is not None:
            lines.append(f"static_assert(std::is_same_v<std::underlying_type_t<{name}>, {upstream.underlying}>, \"{name}: underlying type\");")
        for enumerator, value in upstream.enumerators:
            lines.append(f"static_assert(static_cast<long long>({name}::{enumerator}) == {value}LL, \"{name}::{enumerator}\");")
    return lines


def test_the_emulators_enumerations_are_the_releases_at_every_level(tmp_path: Path) -> None:
    for level in project().api.levels:
        lines = _assertions(level.level)
        assert lines
        probe = tmp_path / f"{level.level}.cpp"
        probe.write_text('#include <type_traits>\n#include "ttlemu_api_types.h"\n' + "\n".join(lines) + "\n", encoding="utf-8")
        done = subprocess.run(
            ["g++", "-std=c++17", "-fsyntax-only", f"-I{GENERATED / 'emulator' / level.level}", f"-I{GLUE}", str(probe)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"level {level.level}:\n{done.stderr}"
