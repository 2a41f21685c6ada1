"""The glue scanner sees what a C++ compiler would see declared in the emulator's glue, so
the emulation spec's bindings are checked against the glue instead of at compile time."""

from __future__ import annotations

from pathlib import Path

from ttlgen.model import emulator_glue

GLUE = """
#pragma once
#define UNARY_TABLE(X) \\
    X(exp, 1)      \\
    X(log, 2)
namespace demo {
namespace compute {
// regs_release() is only mentioned in a comment
inline void regs_acquire() { int local = 0; (void)local; }
template <typename PoolType>
inline void reduce(PoolType pool) { if (pool == PoolType::MAX) return; }
constexpr int kTileRows = 32;
}  // namespace compute
namespace math::sfpu_unary {
enum Function { UNARY_TABLE(ENTRY) };
}
namespace types {
struct DataFormat { int code; };
}
}  // namespace demo
namespace other { inline void hidden() {} }
"""


def _index(tmp_path: Path) -> emulator_glue.GlueIndex:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "glue.hpp").write_text(GLUE, encoding="utf-8")
    return emulator_glue.scan(tmp_path, top="demo")


def test_functions_and_constants_are_declared_in_their_namespace(tmp_path: Path) -> None:
    index = _index(tmp_path)
    assert index.declares("compute::regs_acquire")
    assert index.declares("compute::reduce")
    assert index.declares("compute::kTileRows")


def test_names_in_comments_bodies_and_other_namespaces_are_not_declared(tmp_path: Path) -> None:
    index = _index(tmp_path)
    assert not index.declares("compute::regs_release")
    assert not index.declares("compute::local")
    assert not any(name.endswith("hidden") for name in index.names)


def test_an_x_macro_table_expanded_in_a_namespace_declares_its_entries_there(tmp_path: Path) -> None:
    assert _index(tmp_path).members("math::sfpu_unary") == ["exp", "log"]


def test_types_and_headers_are_indexed(tmp_path: Path) -> None:
    index = _index(tmp_path)
    assert index.members("types") == ["DataFormat"]
    assert index.headers == frozenset({"demo/glue.hpp"})


def test_enumerators_the_glue_writes_are_recorded_with_their_header(tmp_path: Path) -> None:
    assert ("PoolType", "MAX", "demo/glue.hpp") in _index(tmp_path).enumerator_uses


def test_the_real_glue_declares_every_routine_the_emulation_spec_binds() -> None:
    index = emulator_glue.scan()
    assert {"compute::sfpu_unary", "compute::fpu_binary", "compute::reduce"} <= index.names
    assert {"add", "sub", "mul"} <= set(index.members("math::fpu_binary"))
