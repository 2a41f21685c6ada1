"""The shape of a generated file with its comments and string contents taken out.

Two builds whose free text differs must give files of the same shape: the same C/C++ or
Python tokens outside comments and strings, the same JSON structure, the same Markdown
blocks, table columns and inline markup. Hostile text that escaped its comment, string or
table cell changes the shape. Beside that, the compilers and interpreters have the last
word: :func:`compile_errors` builds a generated C/C++ file the way its users do.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import tokenize
from pathlib import Path
from typing import Any

from tests.conftest import REPO, host_define_flags

# ------------------------------------------------------------------------------- C and C++

_TRIGRAPHS = {"=": "#", "/": "\\", "'": "^", "(": "[", ")": "]", "!": "|", "<": "{", ">": "}", "-": "~"}
_C_TOKEN = re.compile(
    r"""
    (?P<comment>/\*.*?\*/|//[^\n]*)
    | (?P<string>(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*")
    | (?P<char>(?:u8|u|U|L)?'(?:\\.|[^'\\\n])*')
    | (?P<word>[^\W\d]\w*)
    | (?P<number>\.?\d(?:[eEpP][+-]|[\w.])*)
    | (?P<space>\s+)
    | (?P<punct>.)
    """,
    re.S | re.X,
)


def c_tokens(text: str) -> list[str]:
    """The tokens of C or C++ source outside comments, every run of adjacent string
    literals as one ``"…"`` token and every character literal as ``'…'``. Trigraphs and
    line splices are applied first, as C99 does, so a comment a splice extends or a string
    a trigraph ends shows in the tokens."""
    text = re.sub(r"\?\?([=/'()!<>-])", lambda m: _TRIGRAPHS[m.group(1)], text)
    text = re.sub(r"\\[ \t]*\n", "", text)
    tokens: list[str] = []
    for match in _C_TOKEN.finditer(text):
        kind = match.lastgroup
        if kind in ("comment", "space"):
            continue
        if kind == "string":
            if tokens and tokens[-1] == '"…"':
                continue
            tokens.append('"…"')
        elif kind == "char":
            tokens.append("'…'")
        else:
            tokens.append(match.group())
    return tokens


# ---------------------------------------------------------------------------------- Python

_STRINGS = {tokenize.STRING, *(getattr(tokenize, n) for n in ("FSTRING_MIDDLE",) if hasattr(tokenize, n))}
_SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING}


def python_tokens(text: str) -> list[str]:
    """The tokens of Python source outside comments, every run of adjacent string tokens as
    one ``"…"``; raises if the source does not tokenize."""
    tokens: list[str] = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in _SKIPPED:
            continue
        if token.type in _STRINGS:
            if tokens and tokens[-1] == '"…"':
                continue
            tokens.append('"…"')
        else:
            tokens.append(f"{tokenize.tok_name[token.type]}:{token.string}")
    return tokens


# ------------------------------------------------------------------------------------ JSON


def json_shape(text: str) -> Any:
    """The parsed JSON with every string value emptied (keys kept)."""

    def empty(value: Any) -> Any:
        if isinstance(value, str):
            return ""
        if isinstance(value, list):
            return [empty(v) for v in value]
        if isinstance(value, dict):
            return {k: empty(v) for k, v in value.items()}
        return value

    return empty(json.loads(text))


# -------------------------------------------------------------------------------- Markdown

_ASCII_PUNCTUATION = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def table_cells(row: str) -> list[str]:
    """The cells of a GFM table row: split at every pipe no backslash escapes (GFM splits
    cells before it reads code spans, so a pipe inside one splits too)."""
    cells, current, index = [], "", 0
    body = row.strip()
    body = body[1:] if body.startswith("|") else body
    while index < len(body):
        ch = body[index]
        if ch == "\\" and index + 1 < len(body):
            current += body[index : index + 2]
            index += 2
            continue
        if ch == "|":
            cells.append(current)
            current = ""
        else:
            current += ch
        index += 1
    if current.strip():
        cells.append(current)
    return cells


def inline_markup(text: str) -> tuple[int, int, int, int, int]:
    """What inline markup a line holds: code spans, stray backticks, HTML starts, link
    brackets and entity references (backslash escapes honoured, code span contents skipped;
    ``&amp;`` and ``&lt;`` are text)."""
    spans = stray = html = links = entities = 0
    index = 0
    while index < len(text):
        ch = text[index]
        if ch == "\\" and index + 1 < len(text) and text[index + 1] in _ASCII_PUNCTUATION:
            index += 2
            continue
        if ch == "`":
            run = re.match(r"`+", text[index:])
            assert run is not None
            fence = run.group()
            close = re.search(rf"(?<!`){fence}(?!`)", text[index + len(fence) :])
            if close is None:
                stray += len(fence)
                index += len(fence)
            else:
                spans += 1
                index += len(fence) + close.end()
            continue
        if ch == "<" and re.match(r"<[A-Za-z/!?]", text[index:]):
            html += 1
        elif ch == "[":
            links += 1
        elif ch == "&" and re.match(r"&#?[A-Za-z0-9]+;", text[index:]) and not re.match("&(?:amp|lt);", text[index:]):
            entities += 1  # &amp; and &lt; are how text shows "&" and "<", not markup
        index += 1
    return spans, stray, html, links, entities


def markdown_text(text: str) -> str:
    """What a line of Markdown without markup reads as: backslash escapes of punctuation
    and the references ``&amp;`` and ``&lt;`` decoded."""
    out, index = [], 0
    while index < len(text):
        if text[index] == "\\" and index + 1 < len(text) and text[index + 1] in _ASCII_PUNCTUATION:
            out.append(text[index + 1])
            index += 2
        elif reference := re.match("&(amp|lt);", text[index:]):
            out.append("&" if reference.group(1) == "amp" else "<")
            index += reference.end()
        else:
            out.append(text[index])
            index += 1
    return "".join(out)


def markdown_shape(text: str) -> list[tuple[object, ...]]:
    """Per line: its block (blank, HTML comment, heading level, table row and its number of
    cells, list, quote, fence, paragraph) and its inline markup."""
    shape: list[tuple[object, ...]] = []
    in_comment = False
    for line in text.split("\n"):
        if in_comment or line.startswith("<!--"):
            in_comment = "-->" not in line
            shape.append(("comment",))
        elif not line.strip():
            shape.append(("blank",))
        elif heading := re.match(r"#{1,6}(?=\s|$)", line):
            shape.append(("heading", len(heading.group()), inline_markup(line)))
        elif line.startswith("|"):
            shape.append(("row", len(table_cells(line)), inline_markup(line)))
        elif re.match(r"\s*(?:[-+*]\s|\d+[.)]\s|>|```|~~~|(?:[-*_]\s*){3,}$|=+\s*$)", line):
            shape.append(("block", line.lstrip()[:1], inline_markup(line)))
        else:
            shape.append(("paragraph", inline_markup(line)))
    return shape


# ------------------------------------------------------------------------------ dispatching

C_SUFFIXES = (".h", ".hpp", ".c", ".cpp", ".inc")


def shape(path: str, text: str) -> object:
    """The shape of a generated file of any kind."""
    if path.endswith(C_SUFFIXES):
        return c_tokens(text)
    if path.endswith(".py"):
        return python_tokens(text)
    if path.endswith(".json"):
        return json_shape(text)
    if path.endswith(".md"):
        return markdown_shape(text)
    raise AssertionError(f"no shape for {path}")


# -------------------------------------------------------------------------------- compiling

GLUE = REPO / "ttlgen" / "device" / "include"
STANDIN = REPO / "tests" / "cpp_tables"
WARNINGS = ["-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only"]


def _run(command: list[str]) -> str | None:
    result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)
    return None if result.returncode == 0 else f"{' '.join(command)}\n{result.stderr}"


def compile_errors(tree: Path, path: str, work: Path) -> list[str]:
    """Compile generated file ``path`` of ``tree`` as its users do, with every standard it
    promises and warnings as errors; the compiler's complaints."""
    relative = Path(path)
    work.mkdir(parents=True, exist_ok=True)
    include = tree / "include"
    commands: list[list[str]] = []
    if path.startswith("include/") and path.endswith(".h"):
        unit = work / "unit.c"
        unit.write_text(f'#include "{relative.relative_to("include").as_posix()}"\n')
        commands += [["gcc", f"-std={std}", *WARNINGS, f"-I{include}", str(unit)] for std in ("c99", "c11")]
        commands += [["g++", "-x", "c++", f"-std={std}", *WARNINGS, f"-I{include}", str(unit)] for std in ("c++11", "c++20")]
    elif path.startswith("include/") and path.endswith(".hpp"):
        unit = work / "unit.cpp"
        unit.write_text(f'#include "{relative.relative_to("include").as_posix()}"\n')
        commands += [["g++", f"-std={std}", *WARNINGS, f"-I{include}", str(unit)] for std in ("c++17", "c++20")]
    elif path.endswith(".inc"):
        commands.append(["g++", "-std=c++17", *WARNINGS, f"-I{STANDIN}", f"-I{include}", str(STANDIN / "adapter_driver.cpp")])
    elif path.startswith("emulator/"):
        level = tree / Path(*relative.parts[:2])
        unit = work / "unit.cpp"
        unit.write_text(f'#include "{Path(*relative.parts[2:]).as_posix()}"\n')
        commands.append(["g++", "-std=c++17", *WARNINGS, *host_define_flags(relative.parts[1]), f"-I{level}", f"-I{GLUE}", str(unit)])
    elif path.startswith("kernels/"):
        commands.append(_kernel_command(tree, relative))
    elif path.endswith(".c"):
        commands.append(["gcc", "-std=c11", *WARNINGS, f"-I{include}", str(tree / path)])
    elif path.endswith(".cpp"):
        commands.append(["g++", "-std=c++17", *WARNINGS, f"-I{include}", str(tree / path)])
    else:
        raise AssertionError(f"no compile rule for {path}")
    return [error for command in commands if (error := _run(command)) is not None]


def _kernel_command(tree: Path, relative: Path) -> list[str]:
    from ttlgen.device.program import load_program

    kernel_dir = tree / relative.parent
    program = load_program(kernel_dir)
    spec = next(s for s in program.kernels.values() if s.source == relative.name)
    args = spec.emulated_compile_time_args()
    define = ["-DKERNEL_COMPILE_TIME_ARGS=" + ",".join(map(str, args))] if args else []
    level = json.loads((kernel_dir / "program.json").read_text())["kernel_api"]
    return ["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Werror", *define, f"-I{tree / 'emulator' / level}", f"-I{GLUE}", str(kernel_dir / relative.name)]
