"""Hostile text in every string of the specs: a located error, or kept inside the comments,
strings, table cells and paragraphs of every output.

The fields come from walking the real specs with their schemas (tests/injection/hostile.py),
so a field a schema gains is covered. Into each the text of every piece of
``hostile.PIECES`` goes at once (comment terminators, line breaks of every kind, a trailing
backslash, trigraphs, quotes, backslash escapes, NUL and other controls, bidirectional
controls, Markdown and HTML, template syntax); names and references reject it with a
located error, and the free-text fields that take it are built. The build must then differ
from the real one only inside comments, strings, cells and paragraphs, show no hidden
character, compile warning-free and import. A field that rejects the whole text is tried
with each piece alone.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.injection import hostile, syntax
from ttlgen.emit._text import hidden

SITES = hostile.string_sites(hostile.real_documents())
FIELDS = hostile.fields(SITES)
VALUE_FIELDS = {f: s for f, s in FIELDS.items() if not s[0].key}
KEY_FIELDS = {f: s for f, s in FIELDS.items() if s[0].key}
# No free text reaches a JSON output (program.json and the emulator's descriptor hold names):
# JSON escaping is tested with a hostile spec file name (tests/injection/test_regressions.py).
OUTPUT_KINDS = {"C and C++": syntax.C_SUFFIXES, "Python": (".py",), "Markdown": (".md",)}
EVERY_SHAPE = (*syntax.C_SUFFIXES, ".py", ".json", ".md")


@pytest.fixture(scope="module")
def full() -> hostile.HostileBuild:
    """The specs with the whole hostile text in every value that takes it."""
    return hostile.hostile_build(VALUE_FIELDS, hostile.appended(hostile.HOSTILE))


def _text(build: hostile.HostileBuild, path: str) -> str:
    return build.outputs[path].decode("utf-8")


def _changed_shapes(build: hostile.HostileBuild, suffixes: tuple[str, ...]) -> list[str]:
    """The outputs whose shape the hostile text changed (compared with plain words there)."""
    return [
        p for p in build.changed(suffixes)
        if syntax.shape(p, _text(build, p)) != syntax.shape(p, build.baseline[p].decode("utf-8"))
    ]


def _representatives(paths: list[str]) -> list[str]:
    """One generated file per template: every kernel's compute.cpp has the same comment."""
    chosen: dict[str, str] = {}
    for path in paths:
        chosen.setdefault(re.sub(r"^kernels/[^/]+/", "kernels/*/", path), path)
    return sorted(chosen.values())


def _written(build: hostile.HostileBuild, root: Path) -> Path:
    """The generated tree with the build's outputs, under ``root``: written once for the
    checks that read it (none writes into it)."""
    tree = root / "tree"
    if not tree.exists():
        hostile.write_tree(build.outputs, tree)
    return tree


def _compile_errors(build: hostile.HostileBuild, root: Path) -> list[str]:
    paths = _representatives(build.changed(syntax.C_SUFFIXES))
    if not paths:  # the text changed no C or C++ file
        return []
    tree = _written(build, root)
    return [e for i, p in enumerate(paths) for e in syntax.compile_errors(tree, p, root / f"unit{i}")]


def _import_errors(build: hostile.HostileBuild, root: Path) -> list[str]:
    packages = sorted({Path(p).parts[1] for p in build.changed((".py",))})
    if not packages:  # the text changed no Python file
        return []
    tree = _written(build, root)
    errors = []
    for package in packages:
        # Every module, with the standard library only (-I) and no bytecode left behind.
        code = (
            f"import importlib, pkgutil, sys; sys.path.insert(0, {str(tree / 'python')!r}); import {package}; "
            f"[importlib.import_module(m.name) for m in pkgutil.walk_packages({package}.__path__, '{package}.')]"
        )
        result = subprocess.run([sys.executable, "-I", "-B", "-c", code], capture_output=True, text=True, check=False)
        if result.returncode != 0:
            errors.append(f"{package}: {result.stderr}")
    return errors


def _hidden_characters(build: hostile.HostileBuild) -> list[str]:
    return [
        f"{path}: U+{ord(ch):04X}"
        for path in build.outputs
        for ch in sorted(set(_text(build, path)))
        if hidden(ch) and ch not in "\n\t"
    ]


# ------------------------------------------------------------------------------ the fields


def test_free_text_fields_of_every_prose_bearing_kind_take_hostile_text(full: hostile.HostileBuild) -> None:
    # The harness would pass vacuously if the walk found no field or everything rejected.
    kinds = {field.split(" ")[0] for field in full.settled.accepted}
    assert {"ttlgen.layout/v1", "ttlgen.program/v1", "ttlgen.kernel/v1", "ttlgen.target/v1",
            "ttlgen.architecture/v1", "ttlgen.tt_metal_api/v1"} <= kinds, kinds
    assert "ttlgen.layout/v1 #/properties/doc" in full.settled.accepted


def test_hostile_text_in_a_name_or_reference_is_a_located_error(full: hostile.HostileBuild) -> None:
    # settle() fails on an unlocated error; here: names and references did reject the text.
    assert "ttlgen.kernel/v1 #/$defs/kernel/properties/target" in full.settled.rejected
    for error in full.settled.rejected.values():
        assert error.mark.line > 0 and error.mark.column > 0, error.format()


def test_hostile_text_reaches_every_kind_of_output(full: hostile.HostileBuild) -> None:
    for kind, suffixes in OUTPUT_KINDS.items():
        assert full.changed(suffixes), f"no {kind} output holds a free-text field: the test would check nothing there"


# ------------------------------------------------------------------------------ the outputs


@pytest.mark.parametrize("kind", OUTPUT_KINDS)
def test_outputs_differ_only_inside_comments_strings_and_cells(full: hostile.HostileBuild, kind: str) -> None:
    assert _changed_shapes(full, OUTPUT_KINDS[kind]) == []


def test_no_code_token_of_an_output_comes_from_the_text(full: hostile.HostileBuild) -> None:
    for path in full.changed((*syntax.C_SUFFIXES, ".py")):
        tokens = syntax.shape(path, _text(full, path))
        assert isinstance(tokens, list)
        assert [t for t in tokens if hostile.INJECTED.search(t)] == [], path


def test_no_output_holds_a_hidden_character(full: hostile.HostileBuild) -> None:
    assert _hidden_characters(full) == []


@pytest.fixture(scope="module")
def full_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the full build's tree is written once, for the compile and the import checks."""
    return tmp_path_factory.mktemp("full")


def test_c_and_cpp_outputs_compile_warning_free(full: hostile.HostileBuild, full_root: Path) -> None:
    assert _compile_errors(full, full_root) == []


def test_python_outputs_import(full: hostile.HostileBuild, full_root: Path) -> None:
    assert _import_errors(full, full_root) == []


def test_hostile_mapping_keys_are_located_errors_or_kept_out_of_code() -> None:
    build = hostile.hostile_build(KEY_FIELDS, hostile.appended(hostile.HOSTILE))
    assert _changed_shapes(build, EVERY_SHAPE) == []
    assert _hidden_characters(build) == []


# ------------------------------------------------------------------------------ piece by piece


@pytest.mark.parametrize("piece", hostile.PIECES)
def test_a_field_that_rejects_the_whole_text_takes_each_piece_safely_or_rejects_it(
    full: hostile.HostileBuild, piece: str, tmp_path: Path
) -> None:
    # A field the model rejected is a name or a reference the model looks up: a piece of the
    # text changes it as much as the whole does. A schema's pattern may be looser than that.
    candidates = {f: VALUE_FIELDS[f] for f in full.settled.by_schema}
    build = hostile.hostile_build(candidates, hostile.appended(hostile.PIECES[piece]))
    assert _changed_shapes(build, EVERY_SHAPE) == []
    assert _hidden_characters(build) == []
    assert _compile_errors(build, tmp_path) == []
    assert _import_errors(build, tmp_path) == []
