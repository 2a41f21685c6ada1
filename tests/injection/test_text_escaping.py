"""Each escaping function of ttlgen/emit/_text.py, checked by the language it writes for:
the C and C++ compilers, Python's parser, JSON, and GFM's table and inline rules."""

from __future__ import annotations

import ast
import json
import random
import subprocess
from pathlib import Path

import pytest

from tests.injection import hostile, syntax
from ttlgen.emit import _text

# Characters of every class the policy names, and sequences each syntax gives a meaning.
_SEQUENCES = ["*/", "/*", "//", "??/", "??=", "??'", '"""', '"', "'", "\\", "\\\n", "|", "`", "``", "<!--", "-->",
              "<b>", "&amp;", "[x](y)", "# ", "1. ", "{{", "}}", "\r\n", "\r", "\n", "\t", "  "]
_POOLS = [
    range(0x20, 0x7F), range(0x00, 0x20), [0x7F], range(0x80, 0xA0), range(0xA0, 0x100),
    [0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200B, 0x200E, 0x200F],
    [0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF, 0xD800, 0xDFFF, 0xE000, 0x0301, 0x3000, 0x00A0],
    [0x1F600, 0xE0001, 0x10FFFF, 0x1D11E],
]


def _corpus() -> list[str]:
    rng = random.Random(13)
    texts = [*hostile.PIECES.values(), hostile.HOSTILE, "", "plain", "x | y << 16", "ends\\", '"', '""', '"""']
    for _ in range(120):
        parts = []
        for _ in range(rng.randrange(1, 12)):
            if rng.random() < 0.4:
                parts.append(rng.choice(_SEQUENCES))
            else:
                parts.append(chr(rng.choice(rng.choice(_POOLS))))
        texts.append("".join(parts))
    return texts


CORPUS = _corpus()


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, check=False, cwd=cwd, timeout=300)


def _no_hidden(text: str) -> bool:
    return not any(_text.hidden(ch) for ch in text if ch not in "\n\t")


# ------------------------------------------------------------------------------- C and C++

STANDARDS = [("gcc", "c99"), ("gcc", "c11"), ("g++", "c++11"), ("g++", "c++20")]


@pytest.mark.parametrize(("compiler", "std"), STANDARDS, ids=[s for _, s in STANDARDS])
def test_c_string_holds_exactly_the_text(compiler: str, std: str, tmp_path: Path) -> None:
    literals = ",\n".join(f"    {_text.c_string(t)}" for t in CORPUS)
    source = tmp_path / ("t.c" if compiler == "gcc" else "t.cpp")
    source.write_text(
        "#include <stdio.h>\n#include <string.h>\n"
        f"static const char *const texts[] = {{\n{literals}\n}};\n"
        "int main(void) {\n    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; ++i) {\n"
        "        for (const char *p = texts[i]; *p != 0; ++p) printf(\"%02x\", (unsigned char)*p);\n"
        "        printf(\"\\n\");\n    }\n    return 0;\n}\n",
        encoding="utf-8",
    )
    built = _run([compiler, f"-std={std}", "-Wall", "-Wextra", "-Werror", "-pedantic", str(source), "-o", "t"], tmp_path)
    assert built.returncode == 0, built.stderr
    printed = _run([str(tmp_path / "t")], tmp_path).stdout.split("\n")
    for index, text in enumerate(CORPUS):
        # C strings end at NUL; a lone surrogate, which UTF-8 cannot hold, is its escape's text.
        expected = "".join(_text.escape(ch) if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)
        assert printed[index] == expected.split("\x00")[0].encode("utf-8").hex(), repr(text)


def test_c_string_source_shows_no_hidden_character() -> None:
    assert all(_no_hidden(_text.c_string(t)) for t in CORPUS)


@pytest.mark.parametrize(("compiler", "std"), STANDARDS, ids=[s for _, s in STANDARDS])
def test_c_comment_text_stays_inside_its_comment(compiler: str, std: str, tmp_path: Path) -> None:
    units = []
    for index, text in enumerate(CORPUS):
        units.append(f"/* {_text.c_comment(text, ' * ')} */\nint block_{index};\n")
        units.append(f"// {_text.c_comment(text)}\nint line_{index};\n")
        units.append(f"    // {_text.c_comment(text, '    // ', width=40)}\nint wrapped_{index};\n")
    code = "".join(units)
    source = tmp_path / ("t.c" if compiler == "gcc" else "t.cpp")
    source.write_text(code, encoding="utf-8")
    built = _run([compiler, f"-std={std}", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only", str(source)], tmp_path)
    assert built.returncode == 0, built.stderr
    expected = [t for i in range(len(CORPUS)) for name in ("block", "line", "wrapped") for t in ("int", f"{name}_{i}", ";")]
    assert syntax.c_tokens(code) == expected
    assert _no_hidden(code)


# ---------------------------------------------------------------------------------- Python


def _read_as_python(text: str) -> str:
    return "\n".join(_text.lines(text))  # a docstring keeps the text's lines, each ending in LF


def test_python_docstring_reads_back_as_the_text() -> None:
    for text in CORPUS:
        source = _text.py_docstring(text)
        assert ast.literal_eval(f'"""{source}"""') == _read_as_python(text), repr(text)
        assert _no_hidden(source)


def test_python_docstring_in_a_class_body_indents_its_further_lines() -> None:
    for text in CORPUS:
        module = ast.parse(f'class A:\n    """{_text.py_docstring(text, "    ")}"""\n')
        cls = module.body[0]
        assert isinstance(cls, ast.ClassDef) and len(cls.body) == 1
        lines = _text.lines(text)
        # The parser reads escapes back; further lines carry the indentation (empty ones none).
        indented = "\n".join([lines[0], *("    " + line if line else "" for line in lines[1:])])
        assert ast.get_docstring(cls, clean=False) == indented, repr(text)


# ---------------------------------------------------------------------------------- Markdown


def _shown(text: str) -> str:
    """What a Markdown cell or paragraph of ``text`` must read: the text on one line, hidden
    characters as escapes."""
    return " ".join(_text.visible(text, keep="\t\n\r").split())


def test_markdown_cell_is_one_cell_of_text_that_reads_as_written() -> None:
    for text in CORPUS:
        cell = _text.md_cell(text)
        row = f"| a | {cell} |"
        assert "\n" not in cell and len(syntax.table_cells(row)) == 2, repr(text)
        assert syntax.inline_markup(cell) == (0, 0, 0, 0, 0), repr(text)
        assert syntax.markdown_text(cell) == _shown(text), repr(text)
        assert _no_hidden(cell)


def test_markdown_text_starts_no_block_and_reads_as_written() -> None:
    for text in CORPUS:
        paragraph = _text.md_text(text)
        if not paragraph:
            continue
        assert syntax.markdown_shape(paragraph) == [("paragraph", (0, 0, 0, 0, 0))], repr(text)
        assert syntax.markdown_text(paragraph) == _shown(text), repr(text)


@pytest.mark.parametrize("in_table", [False, True], ids=["prose", "table"])
def test_markdown_code_span_is_one_span(in_table: bool) -> None:
    for text in CORPUS:
        span = _text.md_code(text, in_table)
        assert syntax.inline_markup(span) == (1, 0, 0, 0, 0), repr(text)
        if in_table:
            assert len(syntax.table_cells(f"| a | {span} |")) == 2, repr(text)


# -------------------------------------------------------------------------------------- JSON


def test_json_text_parses_back_to_the_value_and_shows_no_hidden_character() -> None:
    for text in CORPUS:
        value = {"text": text, "list": [text]}
        encoded = _text.json_text(value, indent=2)
        assert json.loads(encoded) == value, repr(text)
        assert _no_hidden(encoded)
        encoded.encode("utf-8")  # a lone surrogate is an escape, not an unencodable character


# ---------------------------------------------------------------------------------- policy


@pytest.mark.parametrize(
    "code", [0x00, 0x1B, 0x7F, 0x85, 0x200B, 0x200E, 0x202A, 0x202E, 0x2066, 0x2069, 0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xD800, 0xE000, 0xE0001]
)
def test_trojan_source_and_control_characters_are_hidden(code: int) -> None:
    assert _text.hidden(chr(code))


@pytest.mark.parametrize("ch", ["a", " ", "\u00e9", "\u2264", "\U0001f600", "\u00a0", "\u0301"])
def test_printable_characters_are_not_hidden(ch: str) -> None:
    assert not _text.hidden(ch)
