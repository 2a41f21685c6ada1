"""Every generated kernel compiles against the real tt-metal headers of the release its
target's API level pins, as tt-metal's JIT compiles it: the compute kernel for the three
TRISCs (unpack, math with the SFPI stand-in, pack), the reader and the writer for both
data-movement processors, for every architecture of the specs the JIT model covers.

And the check has teeth: copies of a real generated kernel with a removed function, a call
with an argument too few, or a template argument of the wrong kind each fail, and the
failure names the kernel, the processor, the architecture and the compiler's first error.
"""

from __future__ import annotations

import json
import re
import resource
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from upstream_helpers import CALL as _CALL
from upstream_helpers import CompiledMutant, project, targets, unavailable

from tests.conftest import GENERATED, SPECS, run_cli
from ttlgen.model.cpp_declarations import Signature
from ttlgen.model.tt_metal_api import ApiLevel, KernelKind
from ttlgen.upstream import jit
from ttlgen.upstream.cli import summary
from ttlgen.upstream.compile import Outcome, Target, Unit, compile_units, units
from ttlgen.upstream.fetch import DownloadFailed
from ttlgen.upstream.project import architectures, kernel_targets

# Issue 25: the whole check within a minute of CPU (about 10 s here: units that differ only
# in their kernel share a translation unit).
CPU_BUDGET_S = 60.0


def failure_report(outcomes: list[Outcome]) -> str:
    """What a failing run says: one line per unit that does not compile."""
    return "\n".join(f"{o.unit.describe()}: {o.error}" for o in outcomes if not o.ok)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def test_every_generated_kernel_compiles_against_its_levels_headers_on_every_processor() -> None:
    found = targets()
    covered, _ = architectures(project())
    assert covered
    selected = units(found, covered)
    before = _children_cpu()
    outcomes = compile_units(selected)
    spent = _children_cpu() - before
    assert all(o.ok for o in outcomes), f"units that do not compile:\n{failure_report(outcomes)}"
    # Every kernel of the specs, on every processor: unpack, math, pack, and the reader and
    # writer on BRISC and NCRISC.
    runtime = {t.name for t in project().targets.targets if t.kernel_api is not None}
    kernels = {k.name for k in project().kernels.kernels if k.target in runtime}
    assert {o.unit.kernel.name for o in outcomes} == kernels
    per_kernel = {(o.unit.processor.role, o.unit.role) for o in outcomes if o.unit.kernel.name == min(kernels)}
    assert per_kernel == {
        ("unpack", "compute"), ("math", "compute"), ("pack", "compute"),
        ("brisc", "reader"), ("brisc", "writer"), ("ncrisc", "reader"), ("ncrisc", "writer"),
    }  # fmt: skip
    assert spent < CPU_BUDGET_S, f"the compile check took {spent:.1f} s of CPU (budget {CPU_BUDGET_S} s)"


def test_the_command_compiles_the_kernels_named() -> None:
    found = targets()
    kernel = found[0][0].name
    arch = architectures(project())[0][0].name
    result = run_cli("upstream", "compile", kernel, "--arch", arch, "--specs", str(SPECS), "--out", str(GENERATED))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("ttlgen: 7 of 7 units compile against their level's tt-metal headers\n")
    assert f", {arch}: TRISC0 (unpack) 1/1, TRISC1 (math) 1/1, TRISC2 (pack) 1/1, BRISC (NoC 0) 2/2, NCRISC (NoC 1) 2/2" in result.stdout


# ------------------------------------------------------------------------------------ teeth

def _level(target: Target) -> ApiLevel:
    level = project().api.level(target.level)
    assert level is not None
    return level


# Each mutant below is the first generated kernel the edit changes, copied with the edit and
# compiled on TRISC0 (unpack) of the first architecture (the compiled_mutant fixture of
# tests/upstream/conftest.py; test_mutants.py makes and compiles some of the same ones).
def _assert_fails_naming(outcome: Outcome, unit: Unit, *words: str) -> None:
    assert not outcome.ok
    report = failure_report([outcome])
    for part in (unit.kernel.name, unit.processor.label, unit.arch.name, "error:", *words):
        assert part in report, report
    # The compiler's first error, located in the kernel's own source.
    assert re.search(rf"{re.escape(str(unit.kernel.source('compute')))}:\d+:\d+: error: ", report), report


def _forms(level: ApiLevel, name: str) -> list[Signature]:
    return [f.signature for f in level.forms(name, KernelKind.COMPUTE)]


def test_calling_a_function_upstream_removed_fails(compiled_mutant: CompiledMutant) -> None:
    def rename(level: ApiLevel, text: str) -> str | None:
        # A function the level records as removed upstream (else one that never existed),
        # called where the kernel calls its first API function.
        removed = sorted(name for name, _ in level.removed) or ["ttlgen_no_such_function"]
        for call in _CALL.finditer(text):
            if _forms(level, call.group("name")):
                return text[: call.start("name")] + removed[0] + text[call.end("name") :]
        return None

    outcome, target = compiled_mutant(rename)
    removed = sorted(name for name, _ in _level(target).removed) or ["ttlgen_no_such_function"]
    _assert_fails_naming(outcome, outcome.unit, removed[0])


def test_a_call_with_an_argument_too_few_fails(compiled_mutant: CompiledMutant) -> None:
    def drop_last_argument(level: ApiLevel, text: str) -> str | None:
        # A call whose function has no form taking one argument fewer.
        for call in _CALL.finditer(text):
            args = [a.strip() for a in call.group("args").split(",") if a.strip()]
            forms = _forms(level, call.group("name"))
            if args and forms and not any(f.accepts_args(len(args) - 1) for f in forms):
                return text[: call.start("args")] + ", ".join(args[:-1]) + text[call.end("args") :]
        return None

    outcome, _ = compiled_mutant(drop_last_argument)
    _assert_fails_naming(outcome, outcome.unit)


def test_a_template_argument_of_the_wrong_kind_fails(compiled_mutant: CompiledMutant) -> None:
    def wrong_kind(level: ApiLevel, text: str) -> str | None:
        # The first explicit template argument replaced by a value no conversion makes one
        # of its parameter: `true` for an enumeration, `nullptr` for a bool or an integer.
        for call in _CALL.finditer(text):
            forms = _forms(level, call.group("name"))
            if call.group("template") is None or not forms or not forms[0].template:
                continue
            param = forms[0].template[0].type
            if param is None:
                continue
            declared = level.type(param.name)
            value = "true" if declared is not None and declared.is_enum else "nullptr"
            first = call.group("template").split(",")[0]
            return text[: call.start("template")] + value + text[call.start("template") + len(first) :]
        return None

    outcome, _ = compiled_mutant(wrong_kind)
    _assert_fails_naming(outcome, outcome.unit)


def test_the_summary_counts_units_per_level_architecture_and_processor(tmp_path: Path) -> None:
    kernel, target = targets()[0]
    arch = architectures(project())[0][0]
    selected = units([(kernel, target)], [arch])
    outcomes = [Outcome(u, None if u.processor is not jit.MATH else "x.cpp:1:1: error: no") for u in selected]
    text = summary(outcomes, ["quasar"])
    assert text.startswith(f"ttlgen: {len(selected) - 1} of {len(selected)} units compile")
    assert "TRISC1 (math) 0/1" in text
    assert "not compiled: quasar" in text


def test_the_command_exits_1_with_a_line_per_failing_unit(generated_copy: Path) -> None:
    kernel, target = targets()[0]
    arch = architectures(project())[0][0].name
    source = generated_copy / "kernels" / kernel.name / dict(kernel.sources)["compute"]
    text = source.read_text(encoding="utf-8")
    call = next(c for c in _CALL.finditer(text) if _forms(_level(target), c.group("name")))
    source.write_text(text[: call.start("name")] + "ttlgen_no_such_function" + text[call.end("name") :], encoding="utf-8")
    result = run_cli("upstream", "compile", kernel.name, "--arch", arch, "--specs", str(SPECS), "--out", str(generated_copy))
    assert result.exit_code == 1
    failures = result.stderr.splitlines()
    # The compute source fails on each TRISC; the reader and writer still compile.
    assert [line.split(": ")[0] for line in failures] == [
        f"{kernel.name} compute on {p.label}, {arch}, level {target.level} ({target.release.name})" for p in (jit.UNPACK, jit.MATH, jit.PACK)
    ]
    assert all("error: " in line and "ttlgen_no_such_function" in line for line in failures)
    assert result.stdout.startswith("ttlgen: 4 of 7 units compile")


def test_the_descriptor_arrays_have_one_entry_per_circular_buffer_of_the_release(tmp_path: Path) -> None:
    # chlkc_descriptors.h is indexed by CB: its arrays are as long as the release says an
    # architecture has CBs (NUM_CIRCULAR_BUFFERS, which the JIT sizes them by).
    releases = {target.release.sha256: target for _, target in targets()}
    for target in releases.values():
        for arch in architectures(project())[0]:
            probe = tmp_path / f"{arch.name}.cpp"
            probe.write_text(
                '#include "tt-metalium/circular_buffer_constants.h"\n'
                f"static_assert(NUM_CIRCULAR_BUFFERS == {arch.circular_buffers});\n",
                encoding="utf-8",
            )
            done = subprocess.run(
                [jit.compiler(), "-std=c++17", "-fsyntax-only", f"-D{arch.define}", f"-I{target.root / 'tt_metal' / 'api'}", str(probe)],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            assert done.returncode == 0, f"{arch.name}, {target.release.name}: {done.stderr}"


def test_the_compile_check_writes_a_kernels_defines_into_defines_generated_h(tmp_path: Path) -> None:
    # program.json's kernels.compute.defines reach the compute kernel's TRISC files as the
    # JIT writes a KernelDescriptor's defines (no compiler needed).
    source = next(p for p in sorted((GENERATED / "kernels").iterdir()) if p.is_dir())
    copy = tmp_path / source.name
    shutil.copytree(source, copy)
    program = json.loads((copy / "program.json").read_text(encoding="utf-8"))
    program["kernels"]["compute"]["defines"] = {"REDUCE_OP": "PoolType::MAX", "TTLGEN_TEST_DEFINE": "7"}
    (copy / "program.json").write_text(json.dumps(program), encoding="utf-8")
    kernel = jit.read_kernel_dir(copy)
    assert kernel.defines == (("REDUCE_OP", "PoolType::MAX"), ("TTLGEN_TEST_DEFINE", "7"))
    arch = next(iter(jit.ARCHITECTURES.values()))
    jit.write_files(tmp_path / "unit", jit.MATH, [kernel], [kernel.source("compute")], arch, "kernel_main")
    assert (tmp_path / "unit" / "defines_generated.h").read_text() == "#define REDUCE_OP PoolType::MAX\n#define TTLGEN_TEST_DEFINE 7\n"
    assert '#include "defines_generated.h"\n' in (tmp_path / "unit" / "chlkc_math.cpp").read_text()
    # A kernel without defines gets the empty file the JIT writes for it.
    plain = jit.read_kernel_dir(source)
    assert plain.defines == () or "defines" in json.loads((source / "program.json").read_text())["kernels"]["compute"]
    jit.write_files(tmp_path / "plain", jit.MATH, [plain], [plain.source("compute")], arch, "kernel_main")
    assert (tmp_path / "plain" / "defines_generated.h").read_text() == jit.defines_generated(plain.defines)


def test_a_legacy_kernel_whose_ops_need_host_defines_compiles_with_them(tmp_path_factory: pytest.TempPathFactory) -> None:
    # ttnn 0.69.0's reduce.h defaults its template arguments to the host's REDUCE_OP and
    # REDUCE_DIM: a kernel whose op spelling states them compiles on every TRISC with the
    # defines its program.json carries, and not without them.
    from tests.kernels.kernel_helpers import legacy_build
    from ttlgen.model.project import Project
    from ttlgen.pipeline import load_project

    # The real specs pinned to level legacy and their build (once per process: test_api_levels
    # reads the same build).
    root = legacy_build(tmp_path_factory)
    specs, out = root / "specs", root / "out"
    legacy: Project = load_project(specs)
    with_defines = [
        p.name for p in sorted((out / "kernels").iterdir())
        if json.loads((p / "program.json").read_text())["kernels"]["compute"].get("defines")
    ]  # fmt: skip
    assert with_defines
    try:
        (found,) = kernel_targets(legacy, out, with_defines[:1])
    except DownloadFailed as exc:
        unavailable(f"the pinned tt-metal headers cannot be fetched: {exc}")
    covered, _ = architectures(legacy)
    selected = units([found], covered[:1], [jit.UNPACK, jit.MATH, jit.PACK])
    outcomes = compile_units(selected, batch=False)
    assert all(o.ok for o in outcomes), failure_report(outcomes)
    bare = replace(found[0], defines=())
    outcomes = compile_units(units([(bare, found[1])], covered[:1], [jit.UNPACK]), batch=False)
    assert not outcomes[0].ok and "REDUCE_OP" in (outcomes[0].error or "")
