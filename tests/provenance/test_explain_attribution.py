"""``ttlgen explain`` names the spec node a value is written at, not the object that uses it.

A target composes facts from its architecture (DFB capacity, full-fp32 support, the default
target) and its runtime API (the unpack-attribute rules): the lines printing them name the
architecture's or the API's key. A loop a kernel spec writes is its ``loop`` node, in the
line-by-line view and in the regions of the file. The targets, architectures and loops are
found by walking the model of the shipped specs, so an added target or kernel is checked too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SPECS, real_plan, run_cli
from ttlgen.errors import KeyPath
from ttlgen.model.kernels import Loop, walk_statements
from ttlgen.model.ops import ElementType
from ttlgen.model.targets import ARCHITECTURE_KIND, NO_ARCHITECTURE, Target
from ttlgen.provenance import explain
from ttlgen.provenance.explain import regions
from ttlgen.provenance.origins import FileProvenance
from ttlgen.spec.document import SpecDocument

CPP_TABLES = "include/ttl_kernel_config/kernel_target_tables.hpp"
PY_TARGETS = "python/ttl_kernel_config/targets.py"


class Traced:
    """The real specs' traced tree with the model and plan it was traced from."""

    def __init__(self, traced: explain.Traced) -> None:
        self.documents = traced.documents
        self.project, self.plan = real_plan()
        self.files = traced.files

    def architecture(self, target: Target) -> SpecDocument:
        return next(d for d in self.documents if d.kind == ARCHITECTURE_KIND and d.data["name"] == target.architecture)


@pytest.fixture(scope="module")
def traced(real_traced: explain.Traced) -> Traced:
    return Traced(real_traced)


def _composed(traced: Traced) -> list[Target]:
    """The targets whose facts their architecture states."""
    found = [t for t in traced.project.targets.targets if t.architecture != NO_ARCHITECTURE and t.rejected is None]
    assert found, "the specs have no target with an architecture"
    return found


def _first(file: FileProvenance, index: int) -> tuple[str, KeyPath]:
    source = file.origins[index].sources[0]
    return source.mark.file, source.mark.path


def _record(file: FileProvenance, ident: str) -> range:
    """The lines of the C++ record ``ident``."""
    start = next(i for i, line in enumerate(file.lines) if line.startswith(f"inline constexpr TargetRecord {ident}{{"))
    end = next(i for i in range(start, len(file.lines)) if file.lines[i] == "};")
    return range(start, end + 1)


def _cpp_ident(traced: Traced, target: Target) -> str:
    assert traced.plan.kernel_target_cpp is not None
    return next(t.ident for t in traced.plan.kernel_target_cpp.targets if t.name == target.name)


def test_a_targets_dfb_capacity_in_the_cpp_tables_names_its_architectures_key(traced: Traced) -> None:
    file = traced.files[CPP_TABLES]
    for target in _composed(traced):
        architecture = traced.architecture(target)
        lines = [i for i in _record(file, _cpp_ident(traced, target)) if _first(file, i) == (architecture.source, ("dfb_capacity",))]
        assert [file.lines[i].strip() for i in lines] == [f"{target.dfb_capacity},"], target.name
        # The record's own lines still name the target.
        assert _first(file, _record(file, _cpp_ident(traced, target))[0]) == (target.source, ("name",))


def test_a_targets_full_fp32_support_names_the_architectures_entry_of_each_kind(traced: Traced) -> None:
    file = traced.files[CPP_TABLES]
    for target in _composed(traced):
        architecture = traced.architecture(target)
        record = _record(file, _cpp_ident(traced, target))
        for support in target.full_fp32:
            wanted = (architecture.source, ("full_fp32", support.kind))
            lines = [i for i in record if _first(file, i) == wanted]
            assert lines, f"{target.name}: no line of its record names {wanted}"
            assert file.lines[lines[0]].strip().startswith("FullFp32Support{"), file.lines[lines[0]]


def test_the_python_tables_name_the_architecture_for_its_facts(traced: Traced) -> None:
    file = traced.files[PY_TARGETS]
    for target in _composed(traced):
        architecture = traced.architecture(target)
        start = file.lines.index(f"        name={target.name!r},")
        line = next(i for i in range(start, len(file.lines)) if file.lines[i].strip().startswith("dfb_capacity="))
        assert _first(file, line) == (architecture.source, ("dfb_capacity",))
        kinds = [i for i in range(line, len(file.lines)) if "FullFp32Support(" in file.lines[i]][: len(target.full_fp32)]
        assert {_first(file, i) for i in kinds} == {(architecture.source, ("full_fp32", s.kind)) for s in target.full_fp32}


def test_explain_prints_the_architecture_file_for_the_capacity(traced: Traced, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(SPECS.parent)
    target = _composed(traced)[0]
    file = traced.files[CPP_TABLES]
    line = next(i for i in _record(file, _cpp_ident(traced, target)) if file.lines[i].strip() == f"{target.dfb_capacity},")
    result = run_cli("explain", f"generated/{CPP_TABLES}:{line + 1}", "--json")
    assert result.exit_code == 0
    assert f'"file": "{traced.architecture(target).source}"' in result.stdout
    assert '"path": "dfb_capacity"' in result.stdout


def _element_cases(traced: Traced, file: FileProvenance) -> list[tuple[ElementType, int]]:
    """Each line of the C++ tables that switches on an element type (its name, bits, float-
    ness), with the element type and the index of the line."""
    c = traced.plan.kernel_target_cpp
    assert c is not None
    found = []
    for element in traced.project.ops.vocabulary.element_types:
        case = f"case {c.element_type.name}::{c.element_type.of(element.name).cpp}:"
        found += [(element, i) for i, line in enumerate(file.lines) if line.strip() == case]
    return found


def test_an_element_types_rows_in_the_cpp_tables_name_its_vocabulary_entry(traced: Traced) -> None:
    file = traced.files[CPP_TABLES]
    cases = _element_cases(traced, file)
    elements = traced.project.ops.vocabulary.element_types
    # spec_name, bits and is_float switch on every element type.
    assert {element for element, _ in cases} == set(elements) and len(cases) >= 3 * len(elements)
    for element, i in cases:
        # The case and the value it returns (the element's spec name, bits or float-ness).
        for line in (i, i + 1):
            assert _first(file, line) == (element.mark.file, ("element_types", element.name)), file.lines[line]


def test_an_element_predicate_line_of_the_adapter_names_its_vocabulary_entry(traced: Traced) -> None:
    cpp = traced.project.ops.vocabulary.cpp
    assert cpp is not None and cpp.element_predicates
    for predicate in cpp.element_predicates:
        test = f"if (type.{predicate.predicate}) {{"
        found = [(f, i) for f in traced.files.values() for i, line in enumerate(f.lines) if line.strip() == test]
        assert found, f"no generated line tests {predicate.predicate}"
        (element,) = [e for e in traced.project.ops.vocabulary.element_types if e.name == predicate.element]
        for file, i in found:
            # The test is the predicate's; the element it returns, the element type's.
            assert _first(file, i) == (predicate.mark.file, predicate.mark.path), file.lines[i]
            assert _first(file, i + 1) == (element.mark.file, ("element_types", element.name)), file.lines[i + 1]


def _loops(traced: Traced) -> list[tuple[str, Loop]]:
    found = []
    for lowered in traced.plan.kernels:
        kernel = lowered.kernel
        found += [(kernel.name, s) for s in walk_statements(kernel.body) if isinstance(s, Loop)]
    assert found, "no kernel spec has a loop"
    return found


def _loop_lines(file: FileProvenance, loop: Loop) -> list[int]:
    return [i for i, line in enumerate(file.lines) if line.lstrip().startswith(f"for (uint32_t {loop.var} = ")]


def test_a_kernel_loop_line_names_the_loop_node(traced: Traced) -> None:
    documents = {d.source: d for d in traced.documents}
    checked = 0
    for kernel, loop in _loops(traced):
        file = traced.files[f"kernels/{kernel}/compute.cpp"]
        lines = _loop_lines(file, loop)  # none for a loop of no iterations: it prints no code
        checked += len(lines)
        for index in lines:
            spec, path = _first(file, index)
            assert path[-1] == "loop", f"{kernel}:{index + 1} names {path}, not a loop node"
            node = documents[spec].data
            for part in path:
                node = node[part]
            assert isinstance(node, dict) and node["var"] == loop.var
    assert checked, "no loop of the kernel specs prints a for line"


def test_a_kernel_loop_region_is_labelled_at_the_loop_or_a_loop_around_it(traced: Traced) -> None:
    for kernel, loop in _loops(traced):
        file = traced.files[f"kernels/{kernel}/compute.cpp"]
        for index in _loop_lines(file, loop):
            (region,) = [r for r in regions(file) if r.first <= index + 1 <= r.last]
            _, own = _first(file, index)
            # A loop's first line opens a nested loop's region too (the two lines run together).
            assert region.node is not None and region.node[-1] == "loop" and own[: len(region.node)] == region.node
            assert region.what.startswith("loop ")


def test_explain_of_a_kernel_file_lists_the_loop_node(traced: Traced, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(SPECS.parent)
    kernel, loop = _loops(traced)[0]
    result = run_cli("explain", Path("generated", "kernels", kernel, "compute.cpp"))
    assert result.exit_code == 0
    assert f".loop: loop {loop.var!r}\n" in result.stdout
