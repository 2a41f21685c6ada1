"""`ttlgen new`: a scaffold names every fact left to state, and once a user fills them in
the tree builds, with the new entries in the generated output."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import real_project, run_cli
from tests.spec_fuzz import dump_toml
from tests.spec_patch import apply_edits
from tests.user_ops import BINARIES, UNARIES, UserOp
from ttlgen.model.math_spec import MathFunction
from ttlgen.model.project import Project
from ttlgen.model.targets import NO_ARCHITECTURE
from ttlgen.pipeline import load_project

PLACEHOLDER = re.compile(r"^(\s*)([a-z_]+):  # to fill in: .*$", re.MULTILINE)


def fill_in(path: Path, values: dict[str, str]) -> None:
    """What a user types over each placeholder: a value for its key."""
    text = PLACEHOLDER.sub(lambda m: f'{m.group(1)}{m.group(2)}: "{values[m.group(2)]}"', path.read_text(encoding="utf-8"))
    path.write_text(text, encoding="utf-8")


def written(stdout: str) -> list[Path]:
    return [Path(line.removeprefix("wrote ")) for line in stdout.splitlines() if line.startswith("wrote ")]


def test_a_new_architecture_names_each_fact_to_state_and_builds_once_they_are_stated(spec_copy: Path, tmp_path: Path) -> None:
    result = run_cli("new", "arch", "nebula", "--specs", spec_copy)
    assert result.exit_code == 0, result.stderr
    files = written(result.stdout)
    placeholders = sum(len(PLACEHOLDER.findall(f.read_text(encoding="utf-8"))) for f in files)
    assert placeholders > 0
    missing = run_cli("validate", "--specs", spec_copy)
    assert missing.exit_code == 2
    located = [line for line in missing.stderr.splitlines() if ": expected a string, got null" in line]
    assert len(located) == placeholders, missing.stderr
    for file in files:
        fill_in(file, {"summary": "Nebula, a test architecture", "runtime_name": "NEBULA", "display_name": "Nebula", "review": "Nebula has the Gen1 LLK contract"})
    built = run_cli("build", "--specs", spec_copy, "--out", tmp_path / "out")
    assert built.exit_code == 0, built.stderr
    targets = [t for t in load_project(spec_copy).targets.targets if t.architecture == "nebula"]
    assert targets and all(t.name.startswith("nebula") for t in targets)
    assert "NEBULA" in (tmp_path / "out" / "python" / "ttl_kernel_config" / "targets.py").read_text(encoding="utf-8")


@pytest.mark.device
def test_a_new_kernel_runs_on_the_emulator_once_its_summary_is_stated(spec_copy: Path, tmp_path: Path) -> None:
    model = next(k for k in real_project().kernels.kernels)
    result = run_cli("new", "kernel", "my_kernel", "--like", model.name, "--specs", spec_copy)
    assert result.exit_code == 0, result.stderr
    (file,) = written(result.stdout)
    assert run_cli("validate", "--specs", spec_copy).exit_code == 2
    fill_in(file, {"summary": "a copy of another kernel, under a name of its own"})
    assert run_cli("build", "--specs", spec_copy, "--out", tmp_path / "out").exit_code == 0
    ran = run_cli("run", "my_kernel", "--seed", "3", "--specs", spec_copy)
    assert ran.exit_code == 0, ran.stdout + ran.stderr


@pytest.mark.parametrize(("kind", "name"), [("arch", "Bad-Name"), ("kernel", "9lives")])
def test_a_name_that_is_no_identifier_is_refused_and_nothing_is_written(spec_copy: Path, kind: str, name: str) -> None:
    before = sorted(spec_copy.rglob("*"))
    result = run_cli("new", kind, name, "--specs", spec_copy)
    assert result.exit_code == 2
    assert "is not a valid" in result.stderr
    assert sorted(spec_copy.rglob("*")) == before


def test_an_existing_name_is_refused(spec_copy: Path) -> None:
    existing = next(k for k in real_project().kernels.kernels).name
    result = run_cli("new", "kernel", existing, "--specs", spec_copy)
    assert result.exit_code == 2
    assert f"there is already a kernel named {existing!r}" in result.stderr


def test_an_unknown_like_says_what_would_be_valid(spec_copy: Path) -> None:
    result = run_cli("new", "arch", "nebula", "--like", "no_such_arch", "--specs", spec_copy)
    assert result.exit_code == 2
    assert "is no supported architecture" in result.stderr and "choose one of" in result.stderr


def _family_names(specs: Path, name: str) -> list[str]:
    """The family of the ops specs under ``specs`` whose names list holds ``name``, as written."""
    for path in sorted((specs / "ops").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for family, body in (data.get("families") or {}).items():
            if name in body["names"]:
                return [family, path.name]
    return []


@pytest.mark.parametrize("kind", ["unary", "binary"])
def test_a_new_op_goes_to_its_family_spelling_and_emulation_and_validate_names_each_call_to_state(spec_copy: Path, kind: str) -> None:
    project = real_project()
    result = run_cli("new", "op", "tile_user_op", "--kind", kind, "--specs", spec_copy)
    assert result.exit_code == 0, result.stderr
    family, _ = _family_names(spec_copy, "tile_user_op")
    model = next(op for op in project.ops.ops if op.family == family)
    assert len(model.operands) == {"unary": 1, "binary": 2}[kind]
    spelling = project.spelling.source  # specs/ops/..., relative to the test's directory
    placeholders = [(n, line) for n, line in enumerate((spec_copy.parent / spelling).read_text(encoding="utf-8").splitlines(), 1) if "# to fill in:" in line]
    assert len(placeholders) == 2 * len(model.spelling_keys)  # an init and a call for each
    missing = run_cli("validate", "--specs", spec_copy)
    assert missing.exit_code == 2
    located = {int(line.split(":")[1]) for line in missing.stderr.splitlines() if line.startswith(f"{spelling}:")}
    assert located == {n for n, _ in placeholders}, missing.stderr
    emulation = (spec_copy / "tt_metal" / "emulation.yaml").read_text(encoding="utf-8")
    assert "# tile_user_op\n" in emulation and "user_op" in emulation.split("# tile_user_op\n", 1)[1]


def test_a_new_op_is_refused_when_its_name_is_taken_or_its_kind_unknown(spec_copy: Path) -> None:
    before = {p: p.read_bytes() for p in spec_copy.rglob("*") if p.is_file()}
    existing = real_project().ops.ops[0].name
    taken = run_cli("new", "op", existing, "--specs", spec_copy)
    assert taken.exit_code == 2 and f"there is already an op named {existing!r}" in taken.stderr
    unknown = run_cli("new", "op", "tile_user_op", "--kind", "unray", "--specs", spec_copy)
    assert unknown.exit_code == 2 and "did you mean 'unary'" in unknown.stderr
    assert {p: p.read_bytes() for p in spec_copy.rglob("*") if p.is_file()} == before


def _emulator_computes_math_spec_functions(project: Project, family: str) -> bool:
    """Whether every call spelling the family's ops has the emulator compute a function of the
    math spec (its binding passes `function` to a routine of a math table): the only math a
    new op can state by spec edit. A runtime primitive (matmul, reduce, ...), a function of
    the glue's own C++ (the FPU binaries) or a routine taking no function is none."""
    emulation = project.api.emulation
    assert emulation is not None
    bindings = dict(emulation.bindings)
    calls = [
        spelled.call
        for level in project.spelling.levels
        for op in project.ops.ops
        if op.family == family
        for key in op.spelling_keys
        if (spelled := level.spelling(op.name, key)) is not None and spelled.absent is None
    ]
    found = [b for call in calls for b in bindings.get(call.function, ())]
    return bool(found) and all(emulation.math_function(b) is not None for b in found)


FAMILIES = sorted({op.family for op in real_project().ops.ops})
SCAFFOLDED = [f for f in FAMILIES if _emulator_computes_math_spec_functions(real_project(), f)]
REFUSED = [f for f in FAMILIES if f not in SCAFFOLDED]


def _placeholder_lines(specs: Path) -> set[tuple[Path, int]]:
    return {
        (path, n)
        for path in specs.rglob("*.yaml")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PLACEHOLDER.match(line)
    }


@pytest.mark.parametrize("family", SCAFFOLDED)
def test_a_new_op_of_a_family_computing_math_spec_functions_validates_with_only_its_own_placeholders(spec_copy: Path, family: str) -> None:
    result = run_cli("new", "op", "tile_user_op", "--kind", family, "--specs", spec_copy)
    assert result.exit_code == 0, result.stderr
    placeholders = _placeholder_lines(spec_copy)
    assert placeholders
    missing = run_cli("validate", "--specs", spec_copy)
    assert missing.exit_code == 2
    errors = [line.split(":") for line in missing.stderr.splitlines() if not line.startswith("ttlgen:")]
    assert all("expected a string, got null" in line[-1] for line in errors), missing.stderr
    assert {((spec_copy.parent / e[0]).resolve(), int(e[1])) for e in errors} == {(p.resolve(), n) for p, n in placeholders}, missing.stderr


@pytest.mark.parametrize("family", SCAFFOLDED)
def test_a_new_op_binds_functions_of_its_own_computing_its_own_math_and_changes_no_other_binding(spec_copy: Path, family: str) -> None:
    emulation = spec_copy / "tt_metal" / "emulation.yaml"
    before = yaml.safe_load(emulation.read_text(encoding="utf-8"))["functions"]
    assert run_cli("new", "op", "tile_user_op", "--kind", family, "--specs", spec_copy).exit_code == 0
    after = yaml.safe_load(emulation.read_text(encoding="utf-8"))["functions"]
    assert {name: after.get(name) for name in before} == before
    added = {name: binding for name, binding in after.items() if name not in before}
    assert added and all("user_op" in name for name in added)
    assert {b["computes"] for b in added.values() if isinstance(b, dict)} == {"user_op"}


@pytest.mark.parametrize("family", SCAFFOLDED)
def test_a_new_ops_math_placeholder_has_the_operands_and_attributes_of_its_familys_math(spec_copy: Path, family: str) -> None:
    project = real_project()
    math = [project.spelling.math_of(op.name) for op in project.ops.ops if op.family == family]
    shapes = {(m.kind, m.attributes) for m in math if isinstance(m, MathFunction)}
    assert len(shapes) == 1  # its ops' math: one form, the same attributes
    ((form, attributes),) = shapes
    assert run_cli("new", "op", "tile_user_op", "--kind", family, "--specs", spec_copy).exit_code == 0
    stated = yaml.safe_load((spec_copy.parent / project.math.file).read_text(encoding="utf-8"))["functions"]["user_op"]
    assert stated == {form: None, **({"attributes": list(attributes)} if attributes else {})}


@pytest.mark.parametrize("family", REFUSED)
def test_a_new_op_of_a_family_whose_math_the_specs_cannot_state_is_refused_naming_the_family_and_those_that_can_be(spec_copy: Path, family: str) -> None:
    before = {p: p.read_bytes() for p in spec_copy.rglob("*") if p.is_file()}
    result = run_cli("new", "op", "tile_user_op", "--kind", family, "--specs", spec_copy)
    assert result.exit_code == 2, result.stdout
    assert f"ops of family {family!r} cannot be scaffolded: " in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.rsplit("a family that can be: ", 1)[1].strip().split(", ") == SCAFFOLDED
    assert {p: p.read_bytes() for p in spec_copy.rglob("*") if p.is_file()} == before


# What a user types after `ttlgen new op`: the declarations the release's headers give (or
# `ttlgen upstream import --add` writes), the calls, and the kernel that uses the new ops
# (tests/user_ops.py). Each kind has candidates: the first whose function the specs do not
# yet bind is added (a user may have added softplus already, and the scaffold binds a
# function only once).


def _unbound(candidates: tuple[UserOp, ...], project: Project) -> UserOp:
    emulation = project.api.emulation
    assert emulation is not None
    bound = {name for name, _ in emulation.bindings}
    return next(c for c in candidates if c.function not in bound and c.init not in bound)


def _free_name(base: str, project: Project) -> str:
    taken = {op.name for op in project.ops.ops}
    return next(n for n in (f"tile_{base}", *(f"tile_{base}_{i}" for i in range(2, 100))) if n not in taken)


def _user_kernel(unary: tuple[str, UserOp], binary: tuple[str, UserOp]) -> str:
    (u_op, u), (b_op, b) = unary, binary
    return f"""\
spec: ttlgen.kernel/v1
kernels:
  user_ops_bf16:
    summary: {u.base}(x) and {b.base}(a, b) over bf16 tiles, two ops a user added.
    target: blackhole
    dfbs:
      x: {{index: 0, dtype: bf16, block: [1, 1], input: {{shape: [1, 1], distribution: {u.inputs[0]}}}}}
      a: {{index: 1, dtype: bf16, block: [1, 1], input: {{shape: [1, 1], distribution: {b.inputs[0]}}}}}
      b: {{index: 2, dtype: bf16, block: [1, 1], input: {{shape: [1, 1], distribution: {b.inputs[1]}}}}}
      unary: {{index: 16, dtype: bf16, block: [1, 1], output: {{shape: [1, 1]}}}}
      binary: {{index: 17, dtype: bf16, block: [1, 1], output: {{shape: [1, 1]}}}}
    body:
      - wait: [x, a, b]
      - reserve: [unary, binary]
      - store: {{to: unary, value: {{op: {u_op}, args: [x]}}}}
      - store: {{to: binary, value: {{op: {b_op}, args: [a, b]}}}}
      - pop: [x, a, b]
      - push: [unary, binary]
    tolerance: {{pcc: 0.999, max_rel: 1.6e-2, derivation: "bf16: one SFPU result truncated to a 16-bit DST, 2^-7, x2 margin"}}
"""


def _fill_calls(specs: Path, calls: dict[tuple[str, str], str]) -> None:
    path = specs / "ops" / "tt_metal_spelling.yaml"
    lines = path.read_text(encoding="utf-8").split("\n")
    op = ""
    for i, line in enumerate(lines):
        if re.match(r"^  tile_\w+:$", line):
            op = line.strip().rstrip(":")
        found = PLACEHOLDER.match(line)
        if found and (op, found.group(2)) in calls:
            lines[i] = f'{found.group(1)}{found.group(2)}: "{calls[(op, found.group(2))]}"'
    path.write_text("\n".join(lines), encoding="utf-8")


@pytest.mark.device
def test_a_unary_and_a_binary_op_go_from_the_scaffold_to_a_passing_emulator_run(spec_copy: Path, tmp_path: Path) -> None:
    project = real_project()
    math = {f.name for f in project.math.functions}
    added = []
    for kind, candidate in (("unary", _unbound(UNARIES, project)), ("binary", _unbound(BINARIES, project))):
        name = _free_name(candidate.base, project)
        result = run_cli("new", "op", name, "--kind", kind, "--specs", spec_copy, "--function", candidate.function)
        assert result.exit_code == 0, result.stderr
        function = candidate.function
        assert f"`ttlgen upstream import --level current --add {candidate.init} --add {function}`" in result.stdout
        assert run_cli("validate", "--specs", spec_copy).exit_code == 2  # the calls to state
        _fill_calls(spec_copy, {(name, "init"): f"{candidate.init}()", (name, "call"): candidate.call})
        declarations = [e for level in candidate.declarations if (e := candidate.declaration_edit(spec_copy, level)) is not None]
        apply_edits(spec_copy, declarations, case=f"declare {function}")
        if name.removeprefix("tile_") not in math:
            fill_in(spec_copy / "ops" / "math.yaml", {kind: candidate.math})
        validated = run_cli("validate", "--specs", spec_copy)
        assert validated.exit_code == 0, validated.stderr
        added.append((name, candidate))
    (spec_copy / "kernels" / "user_ops.yaml").write_text(_user_kernel(added[0], added[1]), encoding="utf-8")
    assert run_cli("build", "--specs", spec_copy, "--out", tmp_path / "out").exit_code == 0
    ran = run_cli("run", "user_ops_bf16", "--seed", "3", "--specs", spec_copy)
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    assert ran.stdout.startswith("user_ops_bf16 (seed 3): PASS")


def _architectures_with_targets() -> list[str]:
    return sorted({t.architecture for t in real_project().targets.targets if t.rejected is None and t.architecture != NO_ARCHITECTURE})


def test_like_the_environment_without_an_architecture_is_refused_with_the_architectures_to_choose(spec_copy: Path) -> None:
    result = run_cli("new", "arch", "zed", "--like", NO_ARCHITECTURE, "--specs", spec_copy)
    assert result.exit_code == 2, result.stderr
    offered = result.stderr.rsplit("choose one of: ", 1)[1].strip().split(", ")
    assert offered == _architectures_with_targets()


def test_the_name_reserved_for_no_architecture_is_refused_before_anything_is_written(spec_copy: Path) -> None:
    before = sorted(spec_copy.rglob("*"))
    result = run_cli("new", "arch", NO_ARCHITECTURE, "--specs", spec_copy)
    assert result.exit_code == 2
    assert f"{NO_ARCHITECTURE!r} is reserved for the environment without an architecture" in result.stderr
    assert sorted(spec_copy.rglob("*")) == before


def _as_toml(path: Path) -> Path:
    """``path`` rewritten as the TOML of the same data (no comments: TOML as a tool writes it)."""
    toml = path.with_suffix(".toml")
    toml.write_text(dump_toml(yaml.safe_load(path.read_text(encoding="utf-8"))), encoding="utf-8")
    path.unlink()
    return toml


def test_a_kernel_of_a_toml_spec_is_refused_as_a_model_naming_its_file(spec_copy: Path) -> None:
    kernel = real_project().kernels.kernels[0]
    toml = _as_toml(spec_copy.parent / kernel.mark.file)
    assert run_cli("validate", "--specs", spec_copy).exit_code == 0
    before = sorted(spec_copy.rglob("*"))
    result = run_cli("new", "kernel", "my_kernel", "--like", kernel.name, "--specs", spec_copy)
    assert result.exit_code == 2, result.stderr
    assert f"{toml.relative_to(spec_copy.parent)} is a TOML spec file" in result.stderr and "YAML" in result.stderr
    assert sorted(spec_copy.rglob("*")) == before


def test_an_architecture_of_a_toml_spec_is_refused_as_a_model_naming_its_file(spec_copy: Path) -> None:
    model = _architectures_with_targets()[-1]
    toml = _as_toml(spec_copy / "targets" / "architectures" / f"{model}.yaml")
    assert run_cli("validate", "--specs", spec_copy).exit_code == 0
    before = sorted(spec_copy.rglob("*"))
    result = run_cli("new", "arch", "nebula", "--like", model, "--specs", spec_copy)
    assert result.exit_code == 2, result.stderr
    assert f"{toml.relative_to(spec_copy.parent)} is a TOML spec file" in result.stderr
    assert sorted(spec_copy.rglob("*")) == before


def test_an_existing_name_is_refused_as_such_while_a_scaffold_is_unfilled(spec_copy: Path) -> None:
    model = real_project().kernels.kernels[0].name
    assert run_cli("new", "kernel", "my_kernel", "--like", model, "--specs", spec_copy).exit_code == 0
    again = run_cli("new", "kernel", "my_kernel", "--specs", spec_copy)
    assert again.exit_code == 2
    assert again.stderr.strip() == "ttlgen: there is already a kernel named 'my_kernel'; choose another name"


def test_a_kernel_is_scaffolded_after_an_op_whose_blanks_are_unfilled(spec_copy: Path) -> None:
    assert run_cli("new", "op", "tile_user_op", "--specs", spec_copy).exit_code == 0
    result = run_cli("new", "kernel", "my_kernel", "--specs", spec_copy)
    assert result.exit_code == 0, result.stderr
    assert "note: the specs already had" in result.stdout  # the op's blanks, said to be there


@pytest.mark.parametrize("first", [("kernel", "my_kernel"), ("arch", "nebula")])
def test_an_op_is_scaffolded_after_a_kernel_or_architecture_whose_blanks_are_unfilled(spec_copy: Path, first: tuple[str, str]) -> None:
    assert run_cli("new", *first, "--specs", spec_copy).exit_code == 0
    result = run_cli("new", "op", "tile_user_op", "--specs", spec_copy)
    assert result.exit_code == 0, result.stderr


def test_an_op_is_refused_while_the_op_specs_it_extends_have_errors(spec_copy: Path) -> None:
    assert run_cli("new", "op", "tile_user_op", "--specs", spec_copy).exit_code == 0
    before = {p: p.read_bytes() for p in spec_copy.rglob("*") if p.is_file()}
    result = run_cli("new", "op", "tile_user_op_2", "--specs", spec_copy)
    assert result.exit_code == 2
    assert "fix them first" in result.stderr and "ops/" in result.stderr and "Traceback" not in result.stderr
    assert {p: p.read_bytes() for p in spec_copy.rglob("*") if p.is_file()} == before
