"""Where ``ttlgen explain`` says a line comes from: a location a user can follow back, and
never a spec node guessed from equal text."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from tests.conftest import GENERATED, LONG_TESTS, SPECS, TEMPLATES, run_cli
from ttlgen.emit._notice import MANIFEST
from ttlgen.provenance import reverse
from ttlgen.provenance.explain import Traced, explain_line, parse_target
from ttlgen.provenance.origins import node_path
from ttlgen.spec.document import SpecDocument

REPO = SPECS.parent
TABLES = "include/ttl_kernel_config/kernel_target_tables.hpp"
# Spec lines the suite follows back from the kernels (each reads every generated file).
SAMPLED_SPEC_LINES = 40


@pytest.fixture(autouse=True)
def from_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    # Spec files are named from the current directory, as a user names them.
    monkeypatch.chdir(REPO)


def _documents(traced: Traced) -> dict[str, SpecDocument]:
    return {d.display: d for d in traced.documents}


def test_a_mapping_entry_is_shown_at_its_key(real_traced: Traced) -> None:
    # A mapping's value starts at its first child (a kernel's at its summary), a line below
    # the key the user edits.
    documents = _documents(real_traced)
    checked = 0
    for file in real_traced.files.values():
        for origin in file.origins:
            for source in origin.sources:
                mark = source.mark
                document = documents.get(mark.file)
                if document is None or mark.path not in document.positions.keys:
                    continue
                assert (mark.line, mark.column) == document.positions.keys[mark.path], f"{file.path}: {source}"
                checked += 1
    assert checked > 100


def test_the_spec_line_a_generated_line_names_lists_that_generated_line(real_traced: Traced) -> None:
    documents = _documents(real_traced)
    named: dict[tuple[str, int], list[tuple[str, int, object]]] = {}
    for path, file in real_traced.files.items():
        if path.endswith("compute.cpp"):
            for number, origin in enumerate(file.origins, 1):
                for source in origin.sources[:1]:
                    named.setdefault((source.mark.file, source.mark.line), []).append((path, number, source))
    # Each spec line is followed once: the reverse search reads every generated file. The
    # suite follows a seeded sample of them; TTLGEN_LONG_TESTS=1 follows every one.
    lines = sorted(named)
    followed = lines if LONG_TESTS else random.Random(0).sample(lines, min(len(lines), SAMPLED_SPEC_LINES))
    for spec_file, line in followed:
        namings = named[(spec_file, line)]
        document = documents[spec_file]
        (found,) = reverse.produced(real_traced.files, document, reverse.node_at(document, line))
        for path, number, source in namings:
            assert number in found.lines.get(path, {}), f"{path}:{number} names {source}, whose line lists it not"


def _is_float_lines(traced: Traced) -> list[int]:
    file = traced.files[TABLES]
    start = next(i for i, text in enumerate(file.lines) if text.startswith("constexpr bool is_float("))
    end = file.lines.index("}", start)
    # Each case's return (the one after the switch is the template's own).
    return [n + 1 for n in range(start, end) if file.lines[n - 1].strip().startswith("case ")]


def test_a_value_is_not_attributed_to_a_spec_node_that_holds_equal_text(real_traced: Traced) -> None:
    # Whether an element type is a float is the vocabulary's; an emulator define whose
    # value is also 'false' did not produce it.
    file = real_traced.files[TABLES]
    vocabulary = {s.mark.file for n, o in enumerate(file.origins, 1) for s in o.sources if "element type" in s.what}
    lines = _is_float_lines(real_traced)
    assert lines
    for number in lines:
        shown = explain_line(file, number, f"generated/{TABLES}")
        named = {s.mark.file for s in file.origins[number - 1].sources}
        assert named <= vocabulary, shown
        if not named:
            assert "(it prints a value whose spec node is not traced)" in shown, shown


def test_a_spec_value_lists_no_line_that_only_prints_equal_text(real_traced: Traced) -> None:
    # The emulation's defines (DST_ACCUM_MODE: 'false') are no value of the C++ tables.
    with_defines = [d for d in real_traced.documents if isinstance(d.data.get("defines"), dict)]
    assert with_defines
    for document in with_defines:
        for name in document.data["defines"]:
            (found,) = reverse.produced(real_traced.files, document, ("defines", name))
            assert TABLES not in found.lines, f"{document.display}: defines.{name}"


def test_a_line_printing_a_value_is_not_called_the_templates_own_text(real_traced: Traced) -> None:
    file = real_traced.files[TABLES]
    for number in _is_float_lines(real_traced):
        assert "(the template's own text)" not in explain_line(file, number, f"generated/{TABLES}")


def test_explain_accepts_a_location_with_a_column(real_traced: Traced, traced_once: None) -> None:
    documents = _documents(real_traced)
    loop = next(
        s for f in real_traced.files.values() for o in f.origins for s in o.sources[:1] if s.what.startswith("loop ")
    )
    assert parse_target(f"{loop.mark.file}:{loop.mark.line}:{loop.mark.column}", GENERATED).line == loop.mark.line
    with_column = run_cli("explain", f"{loop.mark.file}:{loop.mark.line}:{loop.mark.column}", "--templates", TEMPLATES)
    without = run_cli("explain", f"{loop.mark.file}:{loop.mark.line}", "--templates", TEMPLATES)
    assert with_column.exit_code == 0, with_column.stderr
    assert with_column.stdout == without.stdout
    assert node_path(loop.mark.path)[: 2] == reverse.node_at(documents[loop.mark.file], loop.mark.line)[:2]


def test_explain_names_template_files_from_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compute = sorted((GENERATED / "kernels").glob("*/compute.cpp"))[0]
    monkeypatch.chdir(tmp_path)
    result = run_cli("explain", f"{compute}:{_a_template_line(compute)}", "--specs", SPECS, "--out", GENERATED, "--templates", TEMPLATES)
    assert result.exit_code == 0, result.stderr
    (template,) = [line for line in result.stdout.splitlines() if line.startswith("  template: ")]
    shown = template.removeprefix("  template: ").rpartition(":")[0]
    assert Path(shown).is_file(), template
    assert Path(os.path.abspath(shown)).is_relative_to(Path(TEMPLATES).resolve()), template


def _a_template_line(compute: Path) -> int:
    """A line of the body (kernel code is printed inside its template)."""
    lines = compute.read_text(encoding="utf-8").split("\n")
    return next(n for n, text in enumerate(lines, 1) if text.startswith("    "))


def test_explain_of_the_manifest_says_what_it_is() -> None:
    result = run_cli("explain", f"generated/{MANIFEST}", "--templates", TEMPLATES)
    assert result.exit_code == 2
    assert "not a file the specs generate" not in result.stderr
    assert "hashes of its inputs" in result.stderr
