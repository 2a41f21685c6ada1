"""``ttlgen explain``: every line of a generated file traces to a spec node or a template line.

The provenance of the real specs' outputs is computed once; every non-blank line of the C
header, the C++ header and each kernel's compute.cpp is explained with the text the
command prints, and that text is resolved back: a spec location must name a node of the
spec at exactly that line and column (a mapping entry's key), holding the model object it names; a template line
must hold the line's template text. A line explained by its template alone must print
nothing a spec states: a word on it that its template line does not have and a spec does
(a header path, an entry point's name) is a spec value without its spec node.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from tests.conftest import GENERATED, SPECS, real_documents, real_plan, run_cli
from ttlgen.errors import KeyPath
from ttlgen.provenance import kernel_lines
from ttlgen.provenance.explain import Traced, explain_line, regions
from ttlgen.provenance.origins import FileProvenance, OriginKind
from ttlgen.spec.document import SpecDocument

C_HEADER = "include/komorebi/abi/km_abi.h"
CPP_HEADER = "include/komorebi/device/km_layout.hpp"
COMPUTE = sorted(p.parent.name for p in (GENERATED / "kernels").glob("*/compute.cpp"))
FILES = [C_HEADER, CPP_HEADER, *(f"kernels/{name}/compute.cpp" for name in COMPUTE)]
REPO = SPECS.parent


@pytest.fixture(autouse=True)
def work_in_tmp_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # explain is run from the repository's root here, so the spec paths it prints are the
    # ones the traced documents (named by their source, specs/...) have.
    monkeypatch.chdir(REPO)


@pytest.fixture(scope="module")
def traced(real_traced: Traced) -> tuple[dict[str, FileProvenance], dict[str, SpecDocument]]:
    return real_traced.files, {d.display: d for d in real_traced.documents}


def _key_path(text: str) -> KeyPath:
    """A key path as ``format_key_path`` writes it (``headers['api/x.h'].forms[0]``)."""
    path: list[str | int] = []
    for name, index, quoted in re.findall(r"([A-Za-z_][A-Za-z0-9_\-]*)|\[(\d+)\]|\['([^']*)'\]", text):
        path.append(int(index) if index else quoted or name)
    return tuple(path)


def _node(document: SpecDocument, path: KeyPath) -> object:
    node = document.data
    for part in path:
        node = node[part]
    return node


def _scalars(node: object, depth: int) -> list[object]:
    if isinstance(node, dict):
        return [x for v in node.values() for x in _scalars(v, depth - 1)] if depth else []
    return [node]


SPEC = re.compile(r"^  (?:spec|also): (?P<file>[^:]+):(?P<line>\d+):(?P<column>\d+): (?P<path>\S+): (?P<what>.+)$")
TEMPLATE = re.compile(r"^  template: (?P<file>[^:]+):(?P<line>\d+)")


def _check_spec(match: re.Match[str], documents: dict[str, SpecDocument]) -> None:
    document = documents[match["file"]]
    path = _key_path(match["path"])
    # A mapping's entry is shown at its key (its value may start a line below), a list item at its value.
    assert document.positions.key(path) == (int(match["line"]), int(match["column"])), match[0]
    node, what = _node(document, path), match["what"]
    named = re.fullmatch(r"[\w ]+ '(\w+)'", what)
    key = re.fullmatch(r"the (\w+) of [\w ]+ '[^']*'", what)
    if key is not None and not what.startswith("the spelling of "):  # a key of the object's node
        assert path[-1] == key[1], match[0]
    elif what.startswith("the spelling of "):
        assert what.removeprefix("the spelling of ") + "(" in str(node).replace("<", "(").split("(")[0] + "(", match[0]
    elif named is not None:  # the node is the object's: keyed by its name, or naming it
        assert path[-1] == named[1] or named[1] in _scalars(node, 2), match[0]


def _spec_words(documents: dict[str, SpecDocument]) -> set[str]:
    """Every string a spec states (values and keys) that reads as one word of code."""
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                found.add(str(key))
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif isinstance(node, str):
            found.add(node)

    for document in documents.values():
        walk(document.data)
    return {word for word in found if re.fullmatch(r"[A-Za-z_][\w./]{2,}", word)}


WORD = re.compile(r"[A-Za-z_][\w./]*")


def _check_template_only(match: re.Match[str], text: str, spec_words: set[str]) -> None:
    template = (REPO / match["file"]).read_text(encoding="utf-8").split("\n")[int(match["line"]) - 1]
    printed = set(WORD.findall(text)) - set(WORD.findall(template))
    assert not printed & spec_words, f"{text!r} prints {sorted(printed & spec_words)}, which a spec states, but names no spec node"


def _check_template(match: re.Match[str], text: str) -> None:
    template = (REPO / match["file"]).read_text(encoding="utf-8").split("\n")[int(match["line"]) - 1]
    # Text after a {% tag %} on the line may be left out by it; the text before it is printed.
    unconditional = template.split("{%")[0]
    for literal in (piece.strip() for piece in re.split(r"\{\{.*?\}\}", unconditional)):
        assert literal in text, f"{match[0]}: {literal!r} of {template!r} is not in {text!r}"


@pytest.mark.parametrize("path", FILES)
def test_every_line_is_explained_by_a_spec_node_or_a_template_line(
    path: str, traced: tuple[dict[str, FileProvenance], dict[str, SpecDocument]]
) -> None:
    files, documents = traced
    file = files[path]
    spec_words = _spec_words(documents)
    header = sum(o.kind is OriginKind.HEADER for o in file.origins)
    assert all(o.kind is OriginKind.HEADER for o in file.origins[:header])
    checked = 0
    for number, text in enumerate(file.lines[header:], start=header + 1):
        if not text.strip():
            continue
        shown = explain_line(file, number, f"generated/{path}").splitlines()
        assert shown[0] == f"generated/{path}:{number}: {text}"
        specs = [m for m in map(SPEC.match, shown[1:]) if m]
        templates = [m for m in map(TEMPLATE.match, shown[1:]) if m]
        assert specs or templates, "\n".join(shown)
        for match in specs:
            _check_spec(match, documents)
        for match in templates:
            _check_template(match, text)
            if not specs:
                _check_template_only(match, text, spec_words)
        checked += 1
    assert checked > 20
    if path.endswith("compute.cpp"):  # kernel code is attributed statement by statement, not to its template line
        body = [o for t, o in zip(file.lines, file.origins, strict=True) if t.startswith("    ")]
        assert all(o.kind is OriginKind.SPEC for o in body)


def test_the_traced_files_are_the_generated_files(traced: tuple[dict[str, FileProvenance], dict[str, SpecDocument]]) -> None:
    files, _ = traced
    assert sorted(files) == sorted(p.relative_to(GENERATED).as_posix() for p in GENERATED.rglob("*") if p.is_file() and p.name != "MANIFEST")
    for path, file in files.items():
        assert "\n".join(file.lines) + "\n" == (GENERATED / path).read_text(encoding="utf-8"), path


def test_most_header_lines_name_a_spec_value(traced: tuple[dict[str, FileProvenance], dict[str, SpecDocument]]) -> None:
    files, _ = traced
    file = files[C_HEADER]
    body = [o for t, o in zip(file.lines, file.origins, strict=True) if t.strip() and o.kind is not OriginKind.HEADER]
    assert sum(o.kind is OriginKind.SPEC for o in body) / len(body) > 0.8


def test_a_define_names_its_enum_value(traced: tuple[dict[str, FileProvenance], dict[str, SpecDocument]]) -> None:
    files, _documents = traced
    file = files[C_HEADER]
    number = file.lines.index(next(line for line in file.lines if line.startswith("#define KM_GAVE_LIMIT ")))
    (source, *_) = file.origins[number].sources
    line = (SPECS / "abi/komorebi.yaml").read_text(encoding="utf-8").split("\n").index(
        next(x for x in (SPECS / "abi/komorebi.yaml").read_text(encoding="utf-8").split("\n") if "{name: limit, value: 2" in x)
    )
    assert (source.mark.file, source.mark.line, source.mark.path, source.what) == (
        "specs/abi/komorebi.yaml", line + 1, ("enums", "gave", "values", 2), "enum value 'limit'",
    )


def _first_source(file: FileProvenance, startswith: str, after: str = "") -> tuple[str, KeyPath]:
    start = next((i for i, line in enumerate(file.lines) if line.startswith(after)), 0) if after else 0
    number = next(i for i in range(start, len(file.lines)) if file.lines[i].startswith(startswith))
    source = file.origins[number].sources[0]
    return source.mark.file, source.mark.path


def test_the_layout_doc_and_version_lines_name_their_keys(traced: tuple[dict[str, FileProvenance], dict[str, SpecDocument]]) -> None:
    file = traced[0][C_HEADER]
    assert _first_source(file, " * Runtime ABI of a Komorebi program") == ("specs/abi/komorebi.yaml", ("doc",))
    assert _first_source(file, "/* Version 1.0:") == ("specs/abi/komorebi.yaml", ("abi_version",))


def test_a_rule_of_the_cpp_tables_names_its_relation_rule(traced: tuple[dict[str, FileProvenance], dict[str, SpecDocument]]) -> None:
    file = traced[0]["include/ttl_kernel_config/kernel_target_tables.hpp"]
    # The second rule of gen1_llk.dest_width: when element_bits [32], allow [32].
    found = _first_source(file, "        WidthSet{DestinationElementWidth::Bits32},", after="constexpr WidthRule kGen1LlkDestWidthRules[]")
    assert found == ("specs/targets/gen1_llk.yaml", ("tables", "dest_width", "rules", 1))


def test_the_plan_line_names_the_relation_rules_that_allowed_it(traced: tuple[dict[str, FileProvenance], dict[str, SpecDocument]]) -> None:
    file = traced[0]["kernels/eltwise_add_f32/compute.cpp"]
    number = next(i for i, line in enumerate(file.lines) if line.startswith("// Plan: 32-bit DST"))
    sources = [(s.mark.file, s.mark.path) for s in file.origins[number].sources]
    assert sources[0] == ("specs/kernels/elementwise.yaml", ("kernels", "eltwise_add_f32"))
    assert ("specs/targets/gen1_llk.yaml", ("tables", "dest_width", "rules", 1)) in sources


def test_the_entry_point_names_the_api_level_that_states_it(traced: tuple[dict[str, FileProvenance], dict[str, SpecDocument]]) -> None:
    file = traced[0]["kernels/eltwise_add_f32/compute.cpp"]
    assert _first_source(file, "void kernel_main() {") == ("specs/tt_metal/current.yaml", ("entry", "compute"))
    assert _first_source(file, "}", after="void kernel_main() {") == ("specs/tt_metal/current.yaml", ("entry", "compute"))


def test_regions_cover_the_file_in_order(traced: tuple[dict[str, FileProvenance], dict[str, SpecDocument]]) -> None:
    files, _ = traced
    spans = regions(files[C_HEADER])
    assert spans[0].first == 1 and spans[-1].last == len(files[C_HEADER].lines)
    assert all(a.last + 1 == b.first for a, b in itertools.pairwise(spans))
    assert any(r.key == ("spec", "specs/abi/komorebi.yaml", ("enums", "gave")) for r in spans)


def test_a_kernel_printer_layout_the_walk_does_not_know_is_an_error(
    traced: tuple[dict[str, FileProvenance], dict[str, SpecDocument]], monkeypatch: pytest.MonkeyPatch
) -> None:
    documents = real_documents()
    lowered = real_plan()[1].kernels[0]
    statements = kernel_lines.printer.statements
    monkeypatch.setattr(kernel_lines.printer, "statements", lambda body, indent: [*statements(body, indent), "// extra"])
    with pytest.raises(kernel_lines.PrinterMismatch):
        kernel_lines.body_sources(lowered, lowered.compute, kernel_lines.Locator(tuple(documents)))


# -- the command ----------------------------------------------------------------------------


def test_explain_prints_the_spec_node_and_template_of_a_line(traced: tuple[dict[str, FileProvenance], dict[str, SpecDocument]]) -> None:
    files, _ = traced
    file = files[C_HEADER]
    number = next(i + 1 for i, line in enumerate(file.lines) if line.startswith("#define KM_GAVE_LIMIT "))
    result = run_cli("explain", f"{GENERATED / C_HEADER}:{number}", "--specs", SPECS, "--out", GENERATED)
    assert result.exit_code == 0
    assert result.stdout == explain_line(file, number, f"{GENERATED.as_posix()}/{C_HEADER}")
    assert "enums.gave.values[2]: enum value 'limit'\n  template: templates/c/km_abi.h.j2:6\n" in result.stdout




def test_explain_of_a_file_lists_its_regions() -> None:
    result = run_cli("explain", f"{GENERATED / CPP_HEADER}", "--specs", SPECS, "--out", GENERATED)
    assert result.exit_code == 0
    assert re.search(r"^  \d+-\d+ +specs/abi/komorebi\.yaml:\d+:\d+: enums\.gave: enum 'gave'$", result.stdout, re.M)


def test_explain_of_a_file_the_specs_do_not_generate_is_bad_input() -> None:
    result = run_cli("explain", "include/komorebi/abi/km_abi.hh:3", "--specs", SPECS, "--out", GENERATED)
    assert result.exit_code == 2
    assert result.stderr == (
        "ttlgen: 'include/komorebi/abi/km_abi.hh' is not a file the specs generate "
        "(did you mean 'include/komorebi/abi/km_abi.h'?)\n"
    )


def test_explain_of_a_line_past_the_end_is_bad_input(traced: tuple[dict[str, FileProvenance], dict[str, SpecDocument]]) -> None:
    count = len(traced[0][CPP_HEADER].lines)
    result = run_cli("explain", f"{CPP_HEADER}:{count + 1}", "--specs", SPECS, "--out", GENERATED)
    assert result.exit_code == 2
    assert result.stderr == f"ttlgen: {GENERATED / CPP_HEADER} has {count} lines, not {count + 1}\n"


def test_explain_takes_a_path_relative_to_the_output_tree_and_notes_a_stale_file(tmp_path: Path) -> None:
    out = tmp_path / "generated"
    (out / "include/komorebi/abi").mkdir(parents=True)
    (out / C_HEADER).write_text("old\n", encoding="utf-8")
    result = run_cli("explain", f"{C_HEADER}:1", "--specs", SPECS, "--out", out, "--json")
    assert result.exit_code == 0
    assert '"kind": "header"' in result.stdout  # line 1 as build writes it, not the stale file's
    assert result.stderr == f"ttlgen: note: {(out / C_HEADER).as_posix()} differs from what `ttlgen build` writes; explaining what it writes\n"
