"""The emulator's fp32 math agrees with the float64 reference, function by function.

Both come from one statement in the math spec: the emulator's header is generated from it
(every intermediate in fp32) and the reference interprets it (in float64). Every function
the spec contains, and the approximate form of each that has one, is compiled into one
driver (a single compile) and evaluated on a sampled domain; where the reference is
finite the two agree within the rounding fp32 intermediates make, where it is NaN or
beyond fp32's range the emulator says so too. A function added to the spec is covered
without an edit here.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pytest

from tests.conftest import real_project
from ttlgen.emit import emulator_math
from ttlgen.model.math_spec import MathFunction
from ttlgen.run import evaluate

pytestmark = pytest.mark.device

PROJECT = real_project()
EMULATION = PROJECT.api.emulation
assert EMULATION is not None


@dataclass(frozen=True)
class Form:
    """One form of a function: exact, or approximate."""

    function: MathFunction
    approximate: bool

    @property
    def id(self) -> str:
        return f"{self.function.name}{'~approximate' if self.approximate else ''}"

    def pointer(self) -> str:
        assert EMULATION is not None
        name = f"{EMULATION.namespace}::math::{EMULATION.table(self.function.arity)}::{self.function.name}"
        return f"{name}<{'true' if self.approximate else 'false'}>" if self.function.approximate is not None else name


FORMS = [Form(f, a) for f in PROJECT.math.functions for a in (False, True) if not a or f.approximate is not None]

# The sampled domain: a fine grid over [-6, 6], the values where functions change form
# (0, -0, integers, halves), small and large magnitudes, and random draws; each later
# parameter (y, then an attribute) is a shuffle of the same values, so binaries meet zeros,
# equal operands and both signs.
_rng = np.random.default_rng(26)
_special = [0.0, -0.0, 1e-6, -1e-6, 1e-3, -1e-3, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 2.0, -2.0, 2.5, -2.5, 10.0, -10.0, 50.0, -50.0, 100.0, -100.0]
X = np.concatenate([np.linspace(-6.0, 6.0, 2401), _special, _rng.standard_normal(2000) * 3.0, _rng.uniform(-100.0, 100.0, 500)]).astype(np.float32)
Y = _rng.permutation(X)
Y[: len(_special)] = np.asarray(_special, dtype=np.float32)[::-1]  # zeros meet every sign of x
# A function's parameters (its operands, then the attributes it reads) take these in order.
SAMPLES = [X, Y, *(_rng.permutation(X) for _ in range(max(len(f.parameters) for f in PROJECT.math.functions) - 2))]

# Agreement where the reference is finite: |emulator - reference| <= RELATIVE * |reference|
# + ABSOLUTE * max(1, |x|, |y|). Each fp32 operation rounds by 2^-24 relative to its
# result; RELATIVE allows a few hundred such roundings to add up, ABSOLUTE the cancellation
# of intermediates as large as the operands (1 + tanh(u) near u = -3). Both are far below a
# bf16 unit in the last place (2^-8), where a wrong function or form would land.
RELATIVE = 2.0**-14
ABSOLUTE = 2.0**-19


def _driver_source() -> str:
    """A program evaluating every form at every sample: each form's function takes its
    parameters from the sample arrays in order (``a[k][i]``)."""
    entries = []
    for form in FORMS:
        args = ", ".join(f"a[{k}][i]" for k in range(len(form.function.parameters)))
        entries.append(f"    [](const std::vector<float>* a, long i) {{ return {form.pointer()}({args}); }},")
    return "\n".join(
        [
            "#include <cstdio>",
            "#include <cstdlib>",
            "#include <vector>",
            f'#include "{emulator_math.HEADER}"',
            "using Form = float (*)(const std::vector<float>*, long);",
            "static const Form forms[] = {",
            *entries,
            "};",
            "int main(int argc, char** argv) {",
            "    if (argc != 4) return 2;",
            "    const long n = std::atol(argv[1]);",
            f"    std::vector<float> a[{len(SAMPLES)}], out(n);",
            '    std::FILE* in = std::fopen(argv[2], "rb");',
            "    if (!in) return 3;",
            "    for (std::vector<float>& samples : a) {",
            "        samples.resize(n);",
            "        if (std::fread(samples.data(), 4, n, in) != (size_t)n) return 3;",
            "    }",
            "    std::fclose(in);",
            '    std::FILE* o = std::fopen(argv[3], "wb");',
            "    for (Form form : forms) {",
            "        for (long i = 0; i < n; ++i) out[i] = form(a, i);",
            "        std::fwrite(out.data(), 4, n, o);",
            "    }",
            "    return std::fclose(o);",
            "}",
            "",
        ]
    )


@pytest.fixture(scope="module")
def emulated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, npt.NDArray[np.float32]]:
    """Every form evaluated by the generated header on the samples: one compile, one run."""
    work = tmp_path_factory.mktemp("math-accuracy")
    (work / emulator_math.HEADER).write_text(emulator_math.header_text(PROJECT.math, EMULATION), encoding="utf-8")
    (work / "driver.cpp").write_text(_driver_source(), encoding="utf-8")
    # The flags the emulator compiles kernels with (ttlgen/device/build.py), warnings as errors.
    from ttlgen.device.build import CXX, CXXFLAGS

    compiled = subprocess.run([CXX, *CXXFLAGS, "-I", str(work), str(work / "driver.cpp"), "-o", str(work / "driver")], capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr
    (work / "in.bin").write_bytes(b"".join(samples.tobytes() for samples in SAMPLES))
    ran = subprocess.run([str(work / "driver"), str(len(X)), str(work / "in.bin"), str(work / "out.bin")], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    out = np.fromfile(work / "out.bin", dtype=np.float32).reshape(len(FORMS), len(X))
    return {form.id: out[i] for i, form in enumerate(FORMS)}


def _reference(form: Form) -> npt.NDArray[np.float64]:
    function = form.function
    expr = function.approximate if form.approximate and function.approximate is not None else function.exact
    return evaluate(expr, {p: samples.astype(np.float64) for p, samples in zip(function.parameters, SAMPLES, strict=False)})


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.id)
def test_the_emulators_fp32_math_agrees_with_the_float64_reference(form: Form, emulated: dict[str, npt.NDArray[np.float32]]) -> None:
    got = emulated[form.id].astype(np.float64)
    ref = _reference(form)
    with np.errstate(over="ignore"):
        ref32 = ref.astype(np.float32).astype(np.float64)
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan), f"NaN where the reference is not, or not where it is, at x = {X[np.isnan(got) != nan][:5]}"
    beyond = np.isinf(ref32) & ~nan
    assert np.array_equal(got[beyond], ref32[beyond]), "beyond fp32's range the emulator is not the infinity of the reference's sign"
    finite = ~nan & ~beyond
    scale = np.maximum.reduce([np.ones(len(X)), *(np.abs(a) for a in SAMPLES[: len(form.function.parameters)])]).astype(np.float64)
    error = np.abs(got[finite] - ref[finite])
    bound = RELATIVE * np.abs(ref[finite]) + ABSOLUTE * scale[finite]
    worst = int(np.argmax(error / bound))
    assert np.all(error <= bound), (
        f"{form.id}: |emulator - reference| = {error[worst]:.3e} at "
        f"{', '.join(f'{p} = {a[finite][worst]!r}' for p, a in zip(form.function.parameters, SAMPLES, strict=False))} "
        f"(emulator {got[finite][worst]!r}, reference {ref[finite][worst]!r}, bound {bound[worst]:.3e})"
    )
