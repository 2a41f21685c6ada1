"""The emulator's kernel-API headers reject what the pinned release's headers reject.

Each mutant is a copy of a generated kernel with one mistake a kernel writer (or a wrong
spelling) could make: a function the level removed, an argument too few or too many (a
form the release does not declare), a template argument of the wrong kind, a bare
enumerator of a scoped enumeration, an enumerator of another enumeration. Each is compiled
against the real headers as tt-metal's JIT does (TRISC0) and against the emulator's
headers of its level (generated from the same, checked, API spec): both refuse it. The
unmutated kernels compile both ways (tests/upstream/test_compile.py, tests/kernels).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from upstream_helpers import CALL, CompiledMutant, Edit, mutant_dir, project, targets

from tests.conftest import GENERATED, REPO
from ttlgen.model.cpp_declarations import Signature
from ttlgen.model.tt_metal_api import ApiLevel, KernelKind, TypeDecl
from ttlgen.upstream import jit
from ttlgen.upstream.compile import Outcome, Target, compile_units, units
from ttlgen.upstream.jit import KernelDir
from ttlgen.upstream.project import architectures

GLUE = REPO / "ttlgen" / "device" / "include"


def _forms(level: ApiLevel, name: str) -> list[Signature]:
    return [f.signature for f in level.forms(name, KernelKind.COMPUTE)]


def _level(target: Target) -> ApiLevel:
    level = project().api.level(target.level)
    assert level is not None
    return level


def _replace(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def _args(call: re.Match[str]) -> list[str]:
    return [a.strip() for a in call.group("args").split(",") if a.strip()]


def _template_enum(level: ApiLevel, call: re.Match[str], scoped: bool, only: str | None = None) -> tuple[str, TypeDecl] | None:
    """The first explicit template argument of ``call`` naming an enumerator of an
    enumeration of ``level`` that is (or is not) scoped (``only``: that enumeration): the
    argument and its enumeration."""
    for argument in (call.group("template") or "").split(","):
        owner, _, leaf = argument.strip().rpartition("::")
        kind = level.type(owner) if owner else None
        if kind is None or not kind.is_enum or kind.scoped != scoped or not kind.has_enumerator(leaf):
            continue
        if only is None or kind.name == only:
            return argument.strip(), kind
    return None


def removed_function(level: ApiLevel, text: str) -> str | None:
    # A function the level lists as removed upstream, called where the kernel calls an API function.
    removed = sorted(name for name, _ in level.removed)
    if not removed:
        return None
    for call in CALL.finditer(text):
        if _forms(level, call.group("name")):
            return _replace(text, call.start("name"), call.end("name"), removed[0])
    return None


def argument_too_few(level: ApiLevel, text: str) -> str | None:
    for call in CALL.finditer(text):
        args, forms = _args(call), _forms(level, call.group("name"))
        if args and forms and not any(f.accepts_args(len(args) - 1) for f in forms):
            return _replace(text, call.start("args"), call.end("args"), ", ".join(args[:-1]))
    return None


def argument_too_many(level: ApiLevel, text: str) -> str | None:
    # A form the release does not declare (the 2-CB unary_bcast_init, a write_tile offset).
    for call in CALL.finditer(text):
        args, forms = _args(call), _forms(level, call.group("name"))
        if forms and not any(f.accepts_args(len(args) + 1) for f in forms):
            return _replace(text, call.start("args"), call.end("args"), ", ".join([*args, "0"]))
    return None


def template_argument_of_the_wrong_kind(level: ApiLevel, text: str) -> str | None:
    for call in CALL.finditer(text):
        forms = _forms(level, call.group("name"))
        if call.group("template") is None or not forms or not forms[0].template or forms[0].template[0].type is None:
            continue
        declared = level.type(forms[0].template[0].type.name)
        value = "true" if declared is not None and declared.is_enum else "nullptr"
        first = call.group("template").split(",")[0]
        return _replace(text, call.start("template"), call.start("template") + len(first), value)
    return None


def bare_scoped_enumerator(level: ApiLevel, text: str, only: str | None = None) -> str | None:
    # `SUM` where the enumeration is an enum class (`PoolType::SUM`).
    for call in CALL.finditer(text):
        found = _template_enum(level, call, scoped=True, only=only)
        if found is not None:
            argument, _ = found
            start = call.start("template") + call.group("template").index(argument)
            return _replace(text, start, start + len(argument), argument.rpartition("::")[2])
    return None


def enumerator_of_another_enumeration(level: ApiLevel, text: str, only: str | None = None) -> str | None:
    # BroadcastType::ROW where a PoolType is expected: scoped enumerations do not convert.
    for call in CALL.finditer(text):
        found = _template_enum(level, call, scoped=True, only=only)
        if found is None:
            continue
        argument, kind = found
        other = next((t for t in level.types if t.is_enum and t.scoped and t.name != kind.name and t.enumerators), None)
        if other is None:
            continue
        assert other.enumerators is not None
        start = call.start("template") + call.group("template").index(argument)
        return _replace(text, start, start + len(argument), f"{other.name}::{other.enumerators[0].name}")
    return None


MUTANTS: dict[str, Edit] = {
    "removed_function": removed_function,
    "argument_too_few": argument_too_few,
    "argument_too_many": argument_too_many,
    "template_argument_of_the_wrong_kind": template_argument_of_the_wrong_kind,
    "bare_scoped_enumerator": bare_scoped_enumerator,
    "enumerator_of_another_enumeration": enumerator_of_another_enumeration,
}


def _on_the_emulator(kernel: KernelDir, target: Target) -> subprocess.CompletedProcess[str]:
    """The compute source compiled against the emulator's headers of its level."""
    api = GENERATED / "emulator" / target.level
    return subprocess.run(
        ["g++", "-std=c++17", "-fsyntax-only", f"-I{api}", f"-I{GLUE}", str(kernel.source("compute"))],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def _on_the_real_headers(kernel: KernelDir, target: Target) -> Outcome:
    """The compute source compiled against the real headers of its level on TRISC0 (unpack)
    of the first architecture."""
    arch = architectures(project())[0][0]
    (unit,) = units([(kernel, target)], [arch], [jit.UNPACK])
    (real,) = compile_units([unit], batch=False)
    return real


def _both_reject(real: Outcome, target: Target, mutation: str) -> None:
    """``real``: the mutant compiled against the real headers (_on_the_real_headers)."""
    kernel = real.unit.kernel
    assert not real.ok, f"{mutation}: the real headers ({target.release.name}) accept it"
    emulated = _on_the_emulator(kernel, target)
    assert emulated.returncode != 0, f"{mutation}: the emulator's headers accept it"
    source = re.escape(str(kernel.source("compute")))
    # Both name the kernel's own line.
    assert re.search(rf"{source}:\d+:\d+: error: ", real.error or ""), real.error
    assert re.search(rf"{source}:\d+:\d+: error: ", emulated.stderr), emulated.stderr


# Made for every scoped enumeration the kernels pass by the last test of this file, whose
# first enumeration is the one this test would pick (the first call of the first kernel that
# passes one): the same mutants, compiled the same way.
EVERY_ENUMERATION = ("bare_scoped_enumerator", "enumerator_of_another_enumeration")


@pytest.mark.parametrize("mutation", sorted(set(MUTANTS) - set(EVERY_ENUMERATION)))
def test_a_mutant_the_real_headers_reject_is_rejected_by_the_emulators_headers(
    compiled_mutant: CompiledMutant, mutation: str
) -> None:
    # The first generated kernel the mutation changes, compiled as _on_the_real_headers does
    # (the compiled_mutant fixture of tests/upstream/conftest.py; test_compile.py's teeth
    # make some of the same mutants).
    real, target = compiled_mutant(MUTANTS[mutation])
    _both_reject(real, target, mutation)


def test_every_scoped_enumeration_the_kernels_name_rejects_a_bare_or_foreign_enumerator_both_ways(tmp_path: Path) -> None:
    # Per enumeration a generated kernel passes as a template argument (PoolType, ReduceDim,
    # BroadcastType, SrcOrder, ...): upstream's enum classes and the emulator's alike.
    tried = set()
    for kernel, target in targets():
        level = _level(target)
        text = kernel.source("compute").read_text(encoding="utf-8")
        for call in CALL.finditer(text):
            for argument in (call.group("template") or "").split(","):
                owner = argument.strip().rpartition("::")[0]
                kind = level.type(owner) if owner else None
                if kind is None or not kind.is_enum or not kind.scoped or (target.level, kind.name) in tried:
                    continue
                tried.add((target.level, kind.name))
                _mutate_both_ways(tmp_path, kernel, target, level, kind.name)
    assert tried, "no generated kernel passes an enumerator of a scoped enumeration"


def _mutate_both_ways(tmp_path: Path, kernel: KernelDir, target: Target, level: ApiLevel, name: str) -> None:
    """A bare enumerator of ``name`` and one of another enumeration where ``kernel`` passes
    one of ``name``'s: both headers refuse each."""
    for mutation, edit in (("bare", bare_scoped_enumerator), ("foreign", enumerator_of_another_enumeration)):
        place = tmp_path / f"{target.level}_{name}_{mutation}"
        mutant = mutant_dir(place, kernel, lambda t, edit=edit: edit(level, t, name))
        assert mutant is not None
        _both_reject(_on_the_real_headers(mutant, target), target, f"{mutation} {name}")
