"""No input of the spec-consistent space makes `resolve`, `build` or `run` exit 3.

A seeded search: spec trees that validation accepts (each target's generation, each
architecture's DFB capacity up to what its runtime holds, the DST register, a test-only op
holding several DST slots) and, over each, random kernel descriptions built from the loaded
tables (targets, architectures, element types, ops and their attributes, policy options and
attributes of every type, operand maps), well- and ill-formed. Every command must answer
0, 1 or 2. The default is a small, fixed sample; TTLGEN_RESOLVER_SEARCH=N runs N
descriptions per tree (and more trees and kernel runs), with TTLGEN_RESOLVER_SEED to start
elsewhere."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import SPECS, run_cli
from tests.resolver.kit import tables_of
from ttlgen import resolver as engine

SEARCH = int(os.environ.get("TTLGEN_RESOLVER_SEARCH", "0"))
SEED = int(os.environ.get("TTLGEN_RESOLVER_SEED", "27"))
DESCRIPTIONS = SEARCH or 12
TREES = 4 if SEARCH else 2
RUNS = 3 if SEARCH else 1

RESIDENCY_OPS = """\
spec: ttlgen.ops/v1
families:
  fixed_block:
    summary: A fixed-block op holding num_tiles DST slots at once (test only).
    names: [tile_test_residency]
    primitive: Reduce
    operands:
      - {name: input, route: dfb}
    result: dst
    dst_slots: {by_attribute: num_tiles}
"""


def _variant(root: Path, rng: random.Random) -> Path:
    """A spec tree validation accepts: generations, capacities and the DST register drawn."""
    specs = root / "specs"
    shutil.copytree(SPECS, specs)
    (specs / "ops" / "test_residency.yaml").write_text(RESIDENCY_OPS, encoding="utf-8")
    vocabulary = yaml.safe_load((specs / "ops" / "vocabulary.yaml").read_text(encoding="utf-8"))
    generations = sorted(vocabulary["resolver_generations"])
    apis = yaml.safe_load((specs / "targets" / "runtime_apis.yaml").read_text(encoding="utf-8"))["apis"]
    holds = min(api["runtime_versions"][api["pinned_runtime_version"]]["num_circular_buffers"] for api in apis.values())
    for path in sorted((specs / "targets").glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        if "spec: ttlgen.target/v1" in text:
            lines = [line for line in text.splitlines(keepends=True) if not line.startswith("generation:")]
            at = next(i for i, line in enumerate(lines) if line.startswith("runtime_api:")) + 1
            lines.insert(at, f"generation: {rng.choice(generations)}\n")
            path.write_text("".join(lines), encoding="utf-8")
    for path in sorted((specs / "targets" / "architectures").glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        current = yaml.safe_load(text)["dfb_capacity"]
        # At least the indices the shipped kernels use, at most what the runtime holds.
        new = rng.choice([c for c in (32, 40, holds) if c <= holds])
        # Goldens pin the shipped capacities; a drawn capacity replaces them too.
        path.write_text(text.replace(f"dfb_capacity: {current}\n", f"dfb_capacity: {new}\n").replace(f"value: {current}\n", f"value: {new}\n"), encoding="utf-8")
        for target in (specs / "targets").glob("*.yaml"):
            target_text = target.read_text(encoding="utf-8")
            if f"architecture: {yaml.safe_load(text)['name']}\n" in target_text:
                target.write_text(target_text.replace(f"    value: {current}\n", f"    value: {new}\n"), encoding="utf-8")
    vocab_path = specs / "ops" / "vocabulary.yaml"
    vocab_path.write_text(vocab_path.read_text(encoding="utf-8").replace("physical_tiles: 16", f"physical_tiles: {rng.choice([4, 8, 16, 32])}"), encoding="utf-8")
    return specs


def _value(rng: random.Random) -> object:
    return rng.choice(["auto", "enabled", "disabled", "true", "false", "1", 0, 1, True, False, "maybe", [0, 1], [70]])


def _description(rng: random.Random, catalog: engine.Catalog) -> dict[str, Any]:
    tables = catalog.tables
    elements = [str(e.name) for e in tables.elements]
    capacities = sorted({t.dfb_capacity for t in tables.targets} | {r.dfb_capacity for r in tables.rejected})
    indices = sorted({0, 1, 2, *capacities, *(c - 1 for c in capacities), *(c + 1 for c in capacities), 4095} - {-1})
    out: dict[str, Any] = {}
    targets = [*catalog.target_names(), *(str(a.name) for a in tables.architectures), "nonesuch"]
    if rng.random() < 0.8:
        out["target"] = rng.choice(targets)
    if rng.random() < 0.2:
        out["device_arch"] = rng.choice([*(str(a.name) for a in tables.architectures), *(a.runtime_name or "x" for a in tables.architectures), "Blackhole"])
    dfbs = {rng.choice(indices): rng.choice([*elements, *elements, "bfp9"]) for _ in range(rng.randint(0, 4))}
    if dfbs:
        out["dfbs"] = {str(k): v for k, v in dfbs.items()}
    ops: list[dict[str, Any]] = []
    names = sorted(tables.ops)
    for n in range(rng.randint(1, 5)):
        name = rng.choice([*names, "tile_nonesuch"]) if rng.random() < 0.95 else "tile_nonesuch"
        op: dict[str, Any] = {"id": f"o{n}", "op": name}
        operands: list[dict[str, Any]] = []
        for _ in range(rng.randint(0, 3)):
            if ops and rng.random() < 0.3:
                operands.append({"value": rng.choice([o["id"] for o in ops] + ["ghost"])})
            else:
                operand: dict[str, Any] = {"dfb": rng.choice([*dfbs, *indices]) if dfbs else rng.choice(indices)}
                draw = rng.random()
                if draw < 0.2:
                    operand["tile"] = [rng.randint(0, 2), rng.randint(0, 2)]
                elif draw < 0.45:
                    operand["map"] = rng.choice(["(d0, d1) -> (d0, d1)", "(i, j) -> (i, 0)", "(i, j) -> (0, 0)", "(a) -> (b)", "nonsense", "(i, j) -> (i + j, j)"])
                operands.append(operand)
        if operands:
            op["operands"] = operands
        sem = tables.ops.get(name)
        attrs: dict[str, Any] = {}
        if sem is not None:
            for selected in (sem.primitive, sem.full_fp32):
                if selected is not None and selected.attribute and rng.random() < 0.9:
                    attrs[selected.attribute] = rng.choice([*selected.choices, "bogus"])
            if sem.dst_slots_attribute and rng.random() < 0.95:
                attrs[sem.dst_slots_attribute] = rng.choice([0, 1, 4, 5, 8, 9, 16, 17, 64, "x"])
            if rng.random() < 0.2:
                attrs["strategy"] = rng.choice([*(str(s.name) for s in tables.strategies), "gpu"])
        if attrs:
            op["attrs"] = attrs
        if rng.random() < 0.3:
            op["result"] = rng.choice(elements)
        ops.append(op)
    out["ops"] = ops
    if rng.random() < 0.5:
        out["options"] = {k: _value(rng) for k in rng.sample(engine.OPTION_NAMES, rng.randint(1, 3))}
    if rng.random() < 0.5:
        out["attributes"] = {k: _value(rng) for k in rng.sample(engine.ATTRIBUTE_NAMES, rng.randint(1, 2))}
    return out


def _write(path: Path, data: dict[str, Any]) -> Path:
    try:
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    except yaml.YAMLError:
        path.write_text("ops: []\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("tree", range(TREES))
def test_no_command_exits_3_over_the_spec_consistent_space(tmp_path: Path, tree: int) -> None:
    rng = random.Random(SEED * 1000 + tree)
    specs = _variant(tmp_path, rng)
    build = run_cli("build", "--specs", specs, "--out", tmp_path / "generated")
    assert build.exit_code in (0, 2), build.stderr
    assert build.exit_code == 0, f"a spec-consistent tree builds: {build.stderr}"
    catalog = engine.Catalog(tables_of(specs).tables)
    for n in range(DESCRIPTIONS):
        data = _description(rng, catalog)
        path = _write(tmp_path / f"k{n}.yaml", data)
        result = run_cli("resolve", path, "--specs", specs)  # raises on an unhandled exception
        assert result.exit_code in (0, 1, 2), (data, result.stderr)
        if n % 4 == 0:
            as_json = run_cli("resolve", path, "--specs", specs, "--json")
            assert as_json.exit_code == result.exit_code, (data, as_json.stdout)
    kernels = sorted(k for doc in (specs / "kernels").glob("*.yaml") for k in yaml.safe_load(doc.read_text(encoding="utf-8"))["kernels"])
    for name in rng.sample(kernels, RUNS):
        resolved = run_cli("resolve", name, "--specs", specs)
        assert resolved.exit_code in (0, 1, 2), resolved.stderr
        ran = run_cli("run", name, "--specs", specs, "--seed", "1")
        assert ran.exit_code in (0, 1, 2), ran.stderr
