"""Every identifier the generated C++ defines is one the plan derived (and checked for
collisions) or one of the fixed names it lists. Collisions themselves are bad-spec cases
(tests/fixtures/bad_specs/targets/cpp_name_collision, ops/cpp_enumerator_collision)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import GENERATED, real_plan
from ttlgen.plan.kernel_target_cpp import ADAPTER_DEFINES, HEADER_DEFINES, KernelTargetCpp

_SKIP = re.compile(r"^(?://|#|}|template\b|static_assert\b|namespace \w+ \{|$)")
_TYPE = re.compile(r"^(?:enum class|struct|class) (\w+)")
_ALIAS = re.compile(r"^(?:using|namespace) (\w+) =")
_NAME = re.compile(r"(\w+)\s*(?:\[\]\s*)?(?:\(|=|\{)")


def _declared(path: Path, namespace: str) -> set[str]:
    """Names declared at namespace scope (column 0) inside ``namespace``."""
    text = path.read_text(encoding="utf-8")
    body = text[text.index(f"namespace {namespace} {{") :]
    names = set()
    for line in body.splitlines()[1:]:
        if _SKIP.match(line) or line.startswith(" "):
            continue
        if not _TYPE.match(line) and not any(mark in line for mark in "(={"):
            continue  # a return type; the name follows on the next line
        found = _TYPE.match(line) or _ALIAS.match(line) or _NAME.search(line)
        assert found is not None, f"{path.name}: cannot tell what {line!r} declares"
        names.add(found.group(1))
    return names


def _cpp() -> KernelTargetCpp:
    _, plan = real_plan()
    assert plan.kernel_target_cpp is not None
    return plan.kernel_target_cpp


def test_table_header_defines_the_listed_and_the_derived_names_only() -> None:
    c = _cpp()
    derived = {
        c.primitive.name, c.route.name, c.full_fp32_kind.name, c.dest_width.name, c.unpack_mode.name,
        *(t.ident for t in c.tables), *(t.rules_ident for t in c.tables), *(t.ident for t in c.targets),
    }
    assert _declared(GENERATED / "include" / c.header, c.namespace) == set(HEADER_DEFINES) | derived


def test_adapter_defines_the_listed_and_the_derived_names_only() -> None:
    c = _cpp()
    derived = {t.environment_class for t in c.targets if t.environment_class is not None}
    assert _declared(GENERATED / "include" / c.adapter, c.adapter_namespace) == set(ADAPTER_DEFINES) | derived

