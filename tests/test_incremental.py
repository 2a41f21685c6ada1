"""A build reuses the parts of the tree that no changed input reaches (ttlgen/incremental.py),
and what it writes is always what a full generation writes."""

from __future__ import annotations

import dataclasses
import marshal
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

import pytest

from tests.conftest import SPECS, TEMPLATES
from ttlgen import incremental
from ttlgen.emit import Emitter, emitters
from ttlgen.emit._base import EmitContext, GeneratedFile
from ttlgen.errors import SpecErrors
from ttlgen.generate import generate
from ttlgen.incremental import KernelsWithheld, Outlined, Withheld
from ttlgen.model.kernels import Kernel
from ttlgen.model.project import Project
from ttlgen.pipeline import load_project
from ttlgen.plan.project import ProjectPlan
from ttlgen.spec.document import Positions
from ttlgen.spec.load import load_file

KERNEL_SPEC = "kernels/elementwise.yaml"


@pytest.fixture(autouse=True)
def own_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Records of this test only: the session's cache may hold any earlier test's parts."""
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(tmp_path / "cache"))


def full(specs: Path, templates: Path | None = None) -> dict[str, bytes]:
    return generate(specs, templates, reuse=False).files


def reusing(specs: Path, templates: Path | None = None) -> dict[str, bytes]:
    return generate(specs, templates, reuse=True).files


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path} no longer holds {old!r}; pick another edit"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture
def lowered(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the kernels the generations lower, in order."""
    names: list[str] = []
    real = incremental.plan_kernels

    def recording(kernels, *args, **kwargs):  # type: ignore[no-untyped-def]
        names.extend(k.name for k in kernels)
        return real(kernels, *args, **kwargs)

    monkeypatch.setattr(incremental, "plan_kernels", recording)
    yield names


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the project emitters the generations run (each run of each)."""
    names: list[str] = []

    def recording() -> list[Emitter]:
        found = []
        for e in emitters():
            if e.project is None:
                found.append(e)
                continue

            def run(project: Project, plan: ProjectPlan, ctx: EmitContext, e: Emitter = e) -> list[GeneratedFile]:
                names.append(e.name)
                assert e.project is not None
                return e.project(project, plan, ctx)

            found.append(Emitter(e.name, project=run))
        return found

    monkeypatch.setattr(incremental, "emitters", recording)
    yield names


def kernels_of(specs: Path, source: str) -> list[str]:
    return [k.name for k in load_project(specs).kernels.kernels if k.source == f"specs/{source}"]


# ---------------------------------------------------------------- same bytes as a full generation


@pytest.mark.parametrize(
    ("spec", "old", "new"),
    [
        (KERNEL_SPEC, "out = a + b over bf16 tiles (FPU add_tiles).", "out = a + b, bf16 tiles, FPU add_tiles."),
        ("ops/elementwise.yaml", "\n", "\n# a comment moves every line below it\n"),
        ("abi/komorebi.yaml", "\n", "\n# a comment moves every line below it\n"),
    ],
    ids=["kernel-spec", "op-spec", "layout-spec"],
)
def test_a_build_after_an_edit_writes_what_a_full_generation_writes(spec_copy: Path, spec: str, old: str, new: str) -> None:
    reusing(spec_copy)
    edit(spec_copy / spec, old, new)
    assert reusing(spec_copy) == full(spec_copy)


def test_a_build_after_a_template_edit_writes_what_a_full_generation_writes(spec_copy: Path, tmp_path: Path) -> None:
    # Two directories: a process renders each template directory as it first read it.
    before, after = tmp_path / "templates", tmp_path / "edited-templates"
    shutil.copytree(TEMPLATES, before)
    reusing(spec_copy, before)
    shutil.copytree(TEMPLATES, after)
    edit(after / "kernels" / "compute.cpp.j2", "#include", "// edited template\n#include")
    result = reusing(spec_copy, after)
    assert result == full(spec_copy, after)
    assert b"// edited template" in result["kernels/eltwise_add_bf16/compute.cpp"]


def test_the_committed_specs_reusing_every_part_give_the_committed_tree() -> None:
    first = reusing(SPECS)
    assert reusing(SPECS) == first == full(SPECS)


# ---------------------------------------------------------------- what is regenerated


def test_after_an_edit_of_one_kernel_spec_only_the_kernels_of_that_file_are_lowered(
    spec_copy: Path, lowered: list[str]
) -> None:
    reusing(spec_copy)
    lowered.clear()
    edit(spec_copy / KERNEL_SPEC, "\n", "\n# edited\n")
    reusing(spec_copy)
    assert sorted(lowered) == sorted(kernels_of(spec_copy, KERNEL_SPEC))


def lowered_by(spec_copy: Path, lowered: list[str], change: Callable[[Path], None]) -> list[str]:
    """The kernels a build after ``change`` (of the kernel spec) lowers; the build must give
    what a full generation gives."""
    reusing(spec_copy)
    lowered.clear()
    change(spec_copy / KERNEL_SPEC)
    result = reusing(spec_copy)
    found = sorted(lowered)
    assert result == full(spec_copy)
    return found


def test_after_an_edit_inside_one_kernel_that_moves_no_line_only_that_kernel_is_lowered(
    spec_copy: Path, lowered: list[str]
) -> None:
    def summary(spec: Path) -> None:
        edit(spec, "out = a + b over bf16 tiles (FPU add_tiles).", "out = a + b, bf16 tiles, FPU add_tiles.")

    assert lowered_by(spec_copy, lowered, summary) == ["eltwise_add_bf16"]


def test_after_an_edit_that_moves_the_lines_of_later_kernels_those_are_lowered_too(
    spec_copy: Path, lowered: list[str]
) -> None:
    def longer_summary(spec: Path) -> None:
        # A line added to the first kernel's summary moves every kernel declared after it.
        edit(spec, "    summary: out = a + b over bf16 tiles (FPU add_tiles).\n",
             "    summary: >-\n      out = a + b over bf16 tiles\n      (FPU add_tiles).\n")

    assert lowered_by(spec_copy, lowered, longer_summary) == sorted(kernels_of(spec_copy, KERNEL_SPEC))


def test_after_a_comment_is_added_at_the_end_of_a_kernel_spec_no_kernel_is_lowered(
    spec_copy: Path, lowered: list[str]
) -> None:
    def last_comment(spec: Path) -> None:
        spec.write_text(spec.read_text() + "# a last comment\n")

    assert lowered_by(spec_copy, lowered, last_comment) == []


def test_a_build_of_unchanged_specs_lowers_no_kernel_and_runs_no_emitter(
    spec_copy: Path, lowered: list[str], ran: list[str]
) -> None:
    reusing(spec_copy)
    lowered.clear()
    ran.clear()
    reusing(spec_copy)
    assert (lowered, ran) == ([], [])


def test_a_first_build_runs_every_project_emitter_and_the_outline_readers_twice(spec_copy: Path, ran: list[str]) -> None:
    reusing(spec_copy)
    # kernel_schema names each kernel and its buffers: it runs once without the kernels,
    # then with their outline.
    assert sorted(set(ran)) == sorted(e.name for e in emitters() if e.project is not None)
    assert ran.count("kernel_schema") == 2


def test_after_an_edit_inside_a_kernel_no_project_emitter_runs(spec_copy: Path, ran: list[str]) -> None:
    reusing(spec_copy)
    ran.clear()
    edit(spec_copy / KERNEL_SPEC, "(FPU add_tiles)", "(edited summary)")
    edit(spec_copy / KERNEL_SPEC, "\n", "\n# edited\n")
    result = reusing(spec_copy)
    assert ran == []
    assert result == full(spec_copy)


def test_after_a_kernel_is_renamed_the_emitters_that_read_the_kernels_outline_run(spec_copy: Path, ran: list[str]) -> None:
    reusing(spec_copy)
    ran.clear()
    edit(spec_copy / KERNEL_SPEC, "  eltwise_add_bf16:", "  eltwise_sum_bf16:")
    result = reusing(spec_copy)
    assert ran == ["kernel_schema"]
    assert result == full(spec_copy)
    assert b"eltwise_sum_bf16" in result["schemas/ttlgen.kernel.v1.schema.json"]


def test_after_a_buffer_is_renamed_the_emitters_that_read_the_kernels_outline_run(spec_copy: Path, ran: list[str]) -> None:
    reusing(spec_copy)
    ran.clear()
    # The first kernel of the file: its buffer b becomes rhs wherever the kernel names it.
    edit(spec_copy / KERNEL_SPEC, "      b: {index: 1", "      rhs: {index: 1")
    for _ in range(3):  # wait, the add's operands, pop
        edit(spec_copy / KERNEL_SPEC, "[a, b]", "[a, rhs]")
    result = reusing(spec_copy)
    assert ran == ["kernel_schema"]
    assert result == full(spec_copy)
    assert b'"rhs"' in result["schemas/ttlgen.kernel.v1.schema.json"]


def test_after_an_op_spec_edit_every_kernel_is_lowered_again(spec_copy: Path, lowered: list[str]) -> None:
    reusing(spec_copy)
    lowered.clear()
    edit(spec_copy / "ops" / "elementwise.yaml", "\n", "\n# edited\n")
    reusing(spec_copy)
    assert sorted(lowered) == sorted(k.name for k in load_project(spec_copy).kernels.kernels)


# ---------------------------------------------------------------- emitters that read kernels


def _extra(monkeypatch: pytest.MonkeyPatch, emitter: Emitter) -> None:
    real = incremental.emitters
    monkeypatch.setattr(incremental, "emitters", lambda: [*real(), emitter])


def test_an_emitter_that_reads_the_kernel_specs_is_given_them_and_never_reused_stale(
    spec_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def names(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
        return [GeneratedFile("kernel_names.py", "\n".join(k.summary for k in project.kernels.kernels))]

    _extra(monkeypatch, Emitter("zz_kernel_names", project=names))
    assert b"FPU add_tiles" in reusing(spec_copy)["kernel_names.py"]
    edit(spec_copy / KERNEL_SPEC, "(FPU add_tiles)", "(edited summary)")
    assert b"edited summary" in reusing(spec_copy)["kernel_names.py"]


def test_an_emitter_that_swallows_the_withheld_error_is_still_known_to_read_kernels(
    spec_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def careless(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
        try:
            count = str(len(project.kernels.kernels))
        except Exception:
            count = "none"
        return [GeneratedFile("kernel_count.py", count)]

    _extra(monkeypatch, Emitter("zz_kernel_count", project=careless))
    count = len(load_project(spec_copy).kernels.kernels)
    assert reusing(spec_copy)["kernel_count.py"].endswith(f"\n{count}\n".encode())
    assert full(spec_copy)["kernel_count.py"].endswith(f"\n{count}\n".encode())


def test_an_emitter_that_reads_kernel_plans_gets_every_kernel_lowered(
    spec_copy: Path, monkeypatch: pytest.MonkeyPatch, lowered: list[str]
) -> None:
    def widths(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
        return [GeneratedFile("widths.py", "\n".join(f"{k.kernel.name} {k.dest_width}" for k in plan.kernels))]

    _extra(monkeypatch, Emitter("zz_widths", project=widths))
    reusing(spec_copy)
    edit(spec_copy / KERNEL_SPEC, "\n", "\n# edited\n")
    lowered.clear()
    result = reusing(spec_copy)
    assert result["widths.py"] == full(spec_copy)["widths.py"]
    assert all(f"{k.name} ".encode() in result["widths.py"] for k in load_project(spec_copy).kernels.kernels)


# ---------------------------------------------------------------- records


def parts(tmp_path: Path) -> list[Path]:
    return sorted(p for p in (tmp_path / "cache" / "parts").rglob("*") if p.is_file())


def test_a_failed_generation_records_nothing(spec_copy: Path, tmp_path: Path) -> None:
    edit(spec_copy / KERNEL_SPEC, "target: wormhole_b0", "target: no_such_target")
    with pytest.raises(SpecErrors):
        reusing(spec_copy)
    assert parts(tmp_path) == []


def test_a_damaged_record_is_generated_again(spec_copy: Path, tmp_path: Path) -> None:
    expected = reusing(spec_copy)
    for record in parts(tmp_path):
        record.write_bytes(b"\x00damaged")
    assert reusing(spec_copy) == expected


def test_without_reuse_nothing_is_recorded(spec_copy: Path, tmp_path: Path) -> None:
    full(spec_copy)
    assert parts(tmp_path) == []


# ---------------------------------------------------------------- the stand-in


@pytest.mark.parametrize(
    "use",
    [
        lambda w: w.kernels,
        lambda w: len(w),
        lambda w: list(w),
        lambda w: bool(w),
        lambda w: w[0],
        lambda w: w == (),
        lambda w: hash(w),
        lambda w: repr(w),
        lambda w: f"{w}",
    ],
    ids=["attribute", "len", "iter", "bool", "index", "eq", "hash", "repr", "format"],
)
def test_any_use_of_withheld_kernels_raises_and_is_remembered(use) -> None:  # type: ignore[no-untyped-def]
    withheld = Withheld()
    with pytest.raises(KernelsWithheld):
        use(withheld)
    assert withheld.used


def _outlined_kernel() -> tuple[Kernel, Withheld]:
    tracker = Withheld()
    kernel = load_project(SPECS).kernels.kernels[0]
    return cast(Kernel, Outlined(kernel, incremental._KERNEL_OUTLINE, tracker)), tracker


def test_an_outlined_kernel_shows_its_name_spec_file_and_buffer_names_and_passes_for_a_kernel() -> None:
    outlined, tracker = _outlined_kernel()
    real = load_project(SPECS).kernels.kernels[0]
    assert isinstance(outlined, Kernel)
    assert (outlined.name, outlined.source) == (real.name, real.source)
    assert [d.name for d in outlined.dfbs] == [d.name for d in real.dfbs]
    assert not tracker.used


@pytest.mark.parametrize(
    "use",
    [
        lambda k: k.summary,
        lambda k: k.dfb("a"),
        lambda k: k.dfbs[0].dtype,
        lambda k: k == k,
        lambda k: hash(k),
        lambda k: repr(k),
        lambda k: bool(k.dfbs[0]),
    ],
    ids=["summary", "method", "buffer-dtype", "eq", "hash", "repr", "buffer-bool"],
)
def test_any_use_of_an_outlined_kernel_past_its_outline_raises_and_is_remembered(use) -> None:  # type: ignore[no-untyped-def]
    outlined, tracker = _outlined_kernel()
    with pytest.raises(KernelsWithheld):
        use(outlined)
    assert tracker.used


def test_a_record_with_a_flipped_bit_is_generated_again(spec_copy: Path, tmp_path: Path) -> None:
    expected = reusing(spec_copy)
    damaged = 0
    for record in parts(tmp_path):
        data = record.read_bytes()
        if b"Generated by" in data:  # a file's text: still a valid marshal payload after
            record.write_bytes(data.replace(b"Generated by", b"Generated bY", 1))
            damaged += 1
    assert damaged > 10
    assert reusing(spec_copy) == expected


def test_a_documents_digest_depends_on_its_content_not_on_how_its_objects_are_shared() -> None:

    fresh = load_file(SPECS / KERNEL_SPEC, KERNEL_SPEC)
    # What the parse cache gives back: equal values, shared differently.
    copied = dataclasses.replace(
        fresh,
        data=marshal.loads(marshal.dumps(fresh.data)),
        positions=Positions(*marshal.loads(marshal.dumps((fresh.positions.values, fresh.positions.keys)))),
    )
    assert copied.digest == fresh.digest
    assert dataclasses.replace(fresh, data={**fresh.data, "x": 1}).digest != fresh.digest


def test_an_emitter_that_swallows_the_withheld_error_and_then_fails_is_run_with_the_kernels(
    spec_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fragile(project: Project, plan: ProjectPlan, ctx: EmitContext) -> list[GeneratedFile]:
        try:
            names = [k.name for k in project.kernels.kernels]
        except Exception:
            names = []
        return [GeneratedFile("first_kernel.py", names[0])]  # IndexError without the kernels

    _extra(monkeypatch, Emitter("zz_first_kernel", project=fragile))
    first = sorted(k.name for k in load_project(spec_copy).kernels.kernels)[0]
    assert reusing(spec_copy)["first_kernel.py"].endswith(f"\n{first}\n".encode())
