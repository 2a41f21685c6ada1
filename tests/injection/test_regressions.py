"""The injections issue 13 reported, each through `ttlgen build` on a spec file as a user
writes it, and a spec file whose name is hostile (it reaches every header and JSON file)."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import GENERATED, SPECS, run_cli
from tests.injection import syntax
from ttlgen.emit._text import hidden

LAYOUT = Path("abi") / "komorebi.yaml"


def set_text(specs: Path, relative: Path, path: tuple[str | int, ...], text: str) -> None:
    """Put ``text`` at key path ``path`` of a spec, written as a YAML double-quoted string
    (escapes for what a file may not hold raw, as a user would write it)."""
    target = specs / relative
    data = yaml.safe_load(target.read_text(encoding="utf-8"))
    node = data
    for part in path[:-1]:
        node = node[part]
    old = node[path[-1]]
    assert isinstance(old, str)
    source = target.read_text(encoding="utf-8")
    node[path[-1]] = text
    # Keep the file as written but for the one scalar: find its unique occurrence.
    for quoted in (f'"{old}"', old):
        if source.count(quoted) == 1:
            target.write_text(source.replace(quoted, json.dumps(text)), encoding="utf-8")
            return
    raise AssertionError(f"{old!r} is not unique in {relative}")


def build(specs: Path, out: Path) -> Path:
    result = run_cli("build", "--specs", specs, "--out", out)
    assert result.exit_code == 0, result.stderr
    return out


# Reports that put their text in different places share a build (a module's, read only),
# each still asserting what its own text does: a line break in a constant's doc with the
# hostile file name of a kernel spec (km_layout.hpp names the layout's spec alone), and a
# pipe in a constant's doc with quotes in an enumeration's doc.
LINE_BREAK = "line one\nint injected_line = 2;"
# The name holds what a name may (the loader refuses controls, line breaks and bidirectional
# controls: tests/test_build_check.py): a trigraph, an HTML comment terminator, backslashes, a
# zero-width space that must be escaped to be seen.
FILE_NAME = "unary ??= \u200b --> \\ int injected_symbol; \\.yaml"
PIPE = "a | b | c\nd"
QUOTES = 'a """ b \\N{BULLET} c \\ "'


@pytest.fixture(scope="module")
def line_break_and_file_name(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("line-break-and-file-name")
    specs = shutil.copytree(SPECS, root / "specs")
    set_text(specs, LAYOUT, ("constants", 1, "doc"), LINE_BREAK)
    (specs / "kernels" / "unary.yaml").rename(specs / "kernels" / FILE_NAME)
    return build(specs, root / "out")


@pytest.fixture(scope="module")
def pipe_and_quotes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pipe-and-quotes")
    specs = shutil.copytree(SPECS, root / "specs")
    set_text(specs, LAYOUT, ("constants", 1, "doc"), PIPE)
    set_text(specs, LAYOUT, ("enums", "handler", "doc"), QUOTES)
    return build(specs, root / "out")


def test_doc_with_a_comment_terminator_stays_inside_the_c_comment_of_km_abi_h(spec_copy: Path, tmp_path: Path) -> None:
    injected = "ends the comment */ int injected_symbol = 1; /* reopen"
    set_text(spec_copy, LAYOUT, ("constants", 1, "doc"), injected)
    out = build(spec_copy, tmp_path / "out")
    header = (out / "include/komorebi/abi/km_abi.h").read_text(encoding="utf-8")
    assert "/* ends the comment *\\/ int injected_symbol = 1; /\\* reopen */" in header
    assert "injected_symbol" not in syntax.c_tokens(header)
    assert syntax.compile_errors(out, "include/komorebi/abi/km_abi.h", tmp_path / "unit") == []


def test_doc_with_a_newline_stays_inside_the_line_comment_of_km_layout_hpp(line_break_and_file_name: Path, tmp_path: Path) -> None:
    out = line_break_and_file_name
    header = (out / "include/komorebi/device/km_layout.hpp").read_text(encoding="utf-8")
    assert "// line one\n// int injected_line = 2;\n" in header
    assert "injected_line" not in syntax.c_tokens(header)
    assert syntax.compile_errors(out, "include/komorebi/device/km_layout.hpp", tmp_path / "unit") == []


def test_pipe_in_a_doc_keeps_the_columns_of_its_markdown_table(pipe_and_quotes: Path) -> None:
    lines = (pipe_and_quotes / "docs/komorebi-abi.md").read_text(encoding="utf-8").split("\n")
    row = next(line for line in lines if "a \\| b \\| c d" in line)
    header = lines[lines.index("| Name | Value | C | C++ | Meaning |")]
    assert len(syntax.table_cells(row)) == len(syntax.table_cells(header)) == 5


def test_backslash_ending_a_doc_line_does_not_join_the_next_line_to_the_comment(spec_copy: Path, tmp_path: Path) -> None:
    # `\` before a newline continues a // comment in C and C++: the next line would vanish.
    set_text(spec_copy, LAYOUT, ("constants", 1, "doc"), "ends in a backslash\\")
    out = build(spec_copy, tmp_path / "out")
    header = (out / "include/komorebi/device/km_layout.hpp").read_text(encoding="utf-8")
    assert "// ends in a backslash\\x5C\n" in header
    real = (GENERATED / "include/komorebi/device/km_layout.hpp").read_text(encoding="utf-8")
    assert syntax.c_tokens(header) == syntax.c_tokens(real)


def test_docstring_with_triple_quotes_and_backslashes_reads_back_as_written(pipe_and_quotes: Path) -> None:
    module = ast.parse((pipe_and_quotes / "python/komorebi_abi/layout.py").read_text(encoding="utf-8"))
    docstrings = [ast.get_docstring(node, clean=False) for node in ast.walk(module) if isinstance(node, ast.ClassDef)]
    assert QUOTES in docstrings


def test_hostile_spec_file_name_stays_inside_headers_and_json(line_break_and_file_name: Path, tmp_path: Path) -> None:
    # A file name the loader takes holds anything but "/", NUL, controls, line breaks and
    # bidirectional controls: what may end a comment or a string, and invisible characters.
    out = line_break_and_file_name
    for kernel in ("unary_chain_bf16", "unary_chain_f32"):
        program = (out / "kernels" / kernel / "program.json").read_text(encoding="utf-8")
        assert "injected_symbol" in json.loads(program)["$comment"]
        for path in (f"kernels/{kernel}/compute.cpp", f"kernels/{kernel}/program.json"):
            text = (out / path).read_text(encoding="utf-8")
            assert syntax.shape(path, text) == syntax.shape(path, (GENERATED / path).read_text(encoding="utf-8")), path
            assert not any(hidden(ch) for ch in text if ch not in "\n\t"), path
    assert syntax.compile_errors(out, "kernels/unary_chain_bf16/compute.cpp", tmp_path / "unit") == []
