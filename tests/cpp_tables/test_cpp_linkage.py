"""The table header's records and tables are one object each in the whole program: two
translation units that include it see the same addresses, so TT-Lang can compare a
record it got from ``default_target`` with one it names (C++17 ``inline constexpr``; a
plain namespace-scope ``constexpr`` would give each unit its own copy)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import GENERATED, real_plan
from tests.cpp_tables.support import STANDARDS, compile_cpp
from ttlgen.plan.kernel_target_cpp import KernelTargetCpp

UNIT = """\
#include <cstddef>
#include <cstdio>

#include "{header}"

namespace tables = ::{namespace};

const void* address_in_first_unit(std::size_t index);

static const void* address_here(std::size_t index) {{
    const void* addresses[] = {{
{addresses}
    }};
    return addresses[index];
}}
"""

FIRST = """\
const void* address_in_first_unit(std::size_t index) { return address_here(index); }
"""

SECOND = """\
int main() {{
    const char* names[] = {{
{names}
    }};
    int differ = 0;
    for (std::size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {{
        if (address_in_first_unit(i) != address_here(i)) {{
            std::printf("%s\\n", names[i]);
            ++differ;
        }}
    }}
    return differ == 0 ? 0 : 1;
}}
"""


def _objects(c: KernelTargetCpp) -> list[str]:
    """Every record and table the header defines, and what default_target hands out."""
    found = [f"&tables::{t.ident}" for t in c.targets]
    found += [f"&tables::{t.ident}" for t in c.tables] + [f"tables::{t.rules_ident}" for t in c.tables]
    found.append("tables::kTargets")
    found += [f"tables::default_target(tables::{c.architecture.name}::{e.cpp})" for e, _ in c.default_targets]
    return found


@pytest.mark.parametrize("std", STANDARDS)
def test_two_translation_units_see_one_object_per_record_and_table(std: str, tmp_path: Path) -> None:
    _, plan = real_plan()
    c = plan.kernel_target_cpp
    assert c is not None
    objects = _objects(c)
    unit = UNIT.format(
        header=c.header,
        namespace=c.namespace,
        addresses="\n".join(f"        static_cast<const void*>({o})," for o in objects),
    )
    names = "\n".join(f'        "{o}",' for o in objects)
    first, second = tmp_path / "first.cpp", tmp_path / "second.cpp"
    first.write_text(unit + FIRST, encoding="utf-8")
    second.write_text(unit + SECOND.format(names=names), encoding="utf-8")
    binary = tmp_path / "program"
    built = compile_cpp([first, second], binary, [GENERATED / "include"], std)
    assert built.returncode == 0, built.stderr
    run = subprocess.run([str(binary)], capture_output=True, text=True, check=False, timeout=60)
    # Each line names an object the two units see at different addresses.
    assert (run.returncode, run.stdout) == (0, ""), run.stdout
