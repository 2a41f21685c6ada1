"""``ttlgen explain SPEC[:LINE]``: the generated files and lines a spec node produces.

The nodes are found by walking the model of the shipped specs (an architecture's DFB
capacity, a kernel's loop), never by line numbers, so the tests hold as the specs grow.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import SPECS, TEMPLATES, real_plan, real_project, run_cli
from ttlgen.emit import emulator_math
from ttlgen.errors import KeyPath
from ttlgen.model.kernels import Loop, walk_statements
from ttlgen.model.math_spec import MathFunction
from ttlgen.model.targets import ARCHITECTURE_KIND, NO_ARCHITECTURE, Target
from ttlgen.provenance import reverse
from ttlgen.provenance.explain import Traced
from ttlgen.provenance.origins import node_path
from ttlgen.spec.document import SpecDocument

REPO = SPECS.parent


@pytest.fixture(autouse=True)
def from_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    # Spec files are named from the current directory, as a user names them.
    monkeypatch.chdir(REPO)


@pytest.fixture(scope="module")
def traced(real_traced: Traced) -> Traced:
    # The real specs as named from the repository's root (specs/...), as the tests name them.
    return real_traced


def _document(traced: Traced, kind: str, name: str) -> SpecDocument:
    return next(d for d in traced.documents if d.kind == kind and d.data.get("name") == name)


def _target(traced: Traced) -> Target:
    return next(t for t in real_project().targets.targets if t.architecture != NO_ARCHITECTURE and t.rejected is None)


def _key_line(document: SpecDocument, path: KeyPath) -> int:
    return document.positions.key(path)[0]


def _lines(found: reverse.Produced, path: str) -> list[int]:
    return list(found.lines.get(path, {}))


def test_an_architecture_fact_lists_the_lines_that_print_it(traced: Traced) -> None:
    target = _target(traced)
    architecture = _document(traced, ARCHITECTURE_KIND, target.architecture)
    node = reverse.node_at(architecture, _key_line(architecture, ("dfb_capacity",)))
    assert node == ("dfb_capacity",)
    (found,) = reverse.produced(traced.files, architecture, node)
    # Each target of the architecture prints its capacity in the C++ record and the Python table.
    cpp = traced.files["include/ttl_kernel_config/kernel_target_tables.hpp"]
    assert {cpp.lines[n - 1].strip() for n in _lines(found, cpp.path)} == {f"{target.dfb_capacity},"}
    python = traced.files["python/ttl_kernel_config/targets.py"]
    assert {python.lines[n - 1].strip() for n in _lines(found, python.path)} == {f"dfb_capacity={target.dfb_capacity},"}
    users = [t for t in real_project().targets.targets if t.architecture == target.architecture]
    assert len(_lines(found, cpp.path)) == len(users)


def test_an_element_type_lists_the_cpp_tables_lines_returning_its_bits(traced: Traced) -> None:
    kernel_target_cpp = real_plan()[1].kernel_target_cpp
    assert kernel_target_cpp is not None
    element = real_project().ops.vocabulary.element_types[0]
    document = next(d for d in traced.documents if d.display == element.mark.file)
    node = reverse.node_at(document, element.mark.line)
    assert node == ("element_types", element.name)
    (found,) = reverse.produced(traced.files, document, node)
    cpp = traced.files["include/ttl_kernel_config/kernel_target_tables.hpp"]
    listed = [cpp.lines[n - 1].strip() for n in _lines(found, cpp.path)]
    case = f"case {kernel_target_cpp.element_type.name}::{kernel_target_cpp.element_type.of(element.name).cpp}:"
    # bits() and is_float(): the case and what it returns.
    for returned in (f"return {element.bits};", f"return {'true' if element.is_float else 'false'};"):
        assert any(listed[k : k + 2] == [case, returned] for k in range(len(listed))), returned


def _first_emitted_math_function() -> MathFunction:
    emulation = real_project().api.emulation
    assert emulation is not None
    return next(f for arity, _ in emulation.math_tables for f in emulation.math.of_arity(arity))  # the header's first


def test_a_math_function_lists_its_lines_in_every_emulator_math_header(traced: Traced) -> None:
    function = _first_emitted_math_function()
    document = next(d for d in traced.documents if d.display == function.mark.file)
    node = reverse.node_at(document, function.mark.line)
    assert node == node_path(function.mark.path)
    (found,) = reverse.produced(traced.files, document, node)
    headers = sorted(p for p in traced.files if p.endswith(f"/{emulator_math.HEADER}"))
    assert headers and set(headers) <= set(found.lines)  # the header of every API level
    for path in headers:
        listed = [traced.files[path].lines[n - 1] for n in _lines(found, path)]
        assert any(line.startswith(f"inline float {function.name}(") for line in listed), path


def _kernel_loop(traced: Traced) -> tuple[str, Loop, SpecDocument]:
    for lowered in real_plan()[1].kernels:
        loops = [s for s in walk_statements(lowered.kernel.body) if isinstance(s, Loop)]
        if loops:
            document = next(d for d in traced.documents if d.display == loops[0].mark.file)
            return lowered.kernel.name, loops[0], document
    raise AssertionError("no kernel spec has a loop")


def test_a_kernel_loop_lists_its_for_lines(traced: Traced) -> None:
    kernel, loop, document = _kernel_loop(traced)
    line = document.positions.value(node_path(loop.mark.path))[0]
    node = reverse.node_at(document, line)
    assert node == node_path(loop.mark.path)  # the list item, its loop inside it
    (found,) = reverse.produced(traced.files, document, node)
    compute = traced.files[f"kernels/{kernel}/compute.cpp"]
    listed = {compute.lines[n - 1].strip() for n in _lines(found, compute.path)}
    assert any(text.startswith(f"for (uint32_t {loop.var} = ") for text in listed)


def test_the_lines_of_a_node_are_those_naming_it_or_a_node_inside_it(traced: Traced) -> None:
    _, loop, document = _kernel_loop(traced)
    node = node_path(loop.mark.path)
    (found,) = reverse.produced(traced.files, document, node)
    for path, file in traced.files.items():
        naming = [
            n for n, origin in enumerate(file.origins, 1)
            if any(s.mark.file == document.display and s.mark.path[: len(node)] == node for s in origin.sources)
        ]
        assert _lines(found, path) == naming, path


def test_a_whole_spec_file_lists_each_node_in_file_order(traced: Traced) -> None:
    _, _, document = _kernel_loop(traced)
    nodes = reverse.produced(traced.files, document, None)
    assert len(nodes) > 1
    starts = [document.positions.values[n.node] for n in nodes]
    assert starts == sorted(starts)
    # Together they are every generated line that names a node of the file.
    listed = {(p, n) for found in nodes for p, lines in found.lines.items() for n in lines}
    naming = {
        (path, n) for path, file in traced.files.items() for n, origin in enumerate(file.origins, 1)
        if any(s.mark.file == document.display for s in origin.sources)
    }
    assert listed == naming


def _comment_before_a_node(traced: Traced) -> tuple[SpecDocument, int, int]:
    """A comment line of a spec, and the line of the node that follows it."""
    for document in traced.documents:
        text = Path(document.display).read_text(encoding="utf-8").split("\n")
        starts = {document.positions.key(p)[0] for p in document.positions.values if p}
        for number, line in enumerate(text, 1):
            if line.strip().startswith("#") and number > 1 and number + 1 in starts:
                return document, number, number + 1
    raise AssertionError("no spec has a comment above a key")


def test_a_comment_line_stands_for_the_node_it_documents(traced: Traced) -> None:
    document, comment, node_line = _comment_before_a_node(traced)
    assert reverse.node_at(document, comment) == reverse.node_at(document, node_line)


def test_explain_of_a_spec_line_prints_the_node_and_its_generated_lines(traced: Traced, traced_once: None) -> None:
    target = _target(traced)
    architecture = _document(traced, ARCHITECTURE_KIND, target.architecture)
    line = _key_line(architecture, ("dfb_capacity",))
    result = run_cli("explain", f"{architecture.display}:{line}", "--specs", "specs", "--templates", TEMPLATES)
    assert result.exit_code == 0, result.stderr
    first, *rest = result.stdout.splitlines()
    assert re.fullmatch(rf"{re.escape(architecture.display)}:{line}:\d+: dfb_capacity \(.*\): \d+ generated lines in \d+ files", first)
    assert any(line.startswith("  generated/include/ttl_kernel_config/kernel_target_tables.hpp: ") for line in rest)


def test_explain_of_a_spec_line_as_json(traced: Traced, traced_once: None) -> None:
    target = _target(traced)
    architecture = _document(traced, ARCHITECTURE_KIND, target.architecture)
    line = _key_line(architecture, ("dfb_capacity",))
    result = run_cli("explain", f"{architecture.display}:{line}", "--json", "--templates", TEMPLATES)
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert payload["status"] == "ok" and payload["spec"] == architecture.display
    (node,) = payload["nodes"]
    assert node["path"] == "dfb_capacity" and node["line"] == line
    texts = {entry["text"].strip() for generated in node["generated"] for entry in generated["lines"]}
    assert f"{target.dfb_capacity}," in texts


def test_explain_of_a_whole_spec_file(traced: Traced) -> None:
    kernel, loop, document = _kernel_loop(traced)
    result = run_cli("explain", document.display, "--templates", TEMPLATES)
    assert result.exit_code == 0
    assert result.stdout.startswith(f"{document.display}: ")
    assert f"(loop {loop.var!r})" in result.stdout
    assert f"generated/kernels/{kernel}/compute.cpp: " in result.stdout


def test_explain_of_a_spec_line_past_the_end_is_bad_input(traced: Traced) -> None:
    document = traced.documents[0]
    count = len(Path(document.display).read_text(encoding="utf-8").splitlines())
    result = run_cli("explain", f"{document.display}:{count + 1}", "--templates", TEMPLATES)
    assert result.exit_code == 2
    assert result.stderr == f"ttlgen: {document.display} has {count} lines, not {count + 1}\n"


def test_explain_of_a_spec_file_the_tree_does_not_have_is_bad_input(traced: Traced) -> None:
    document = traced.documents[0]
    wrong = document.display.replace(".", "x.", 1)
    result = run_cli("explain", f"{wrong}:1", "--templates", TEMPLATES)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"ttlgen: {wrong!r} is not a spec file of the tree nor a file the specs generate")
