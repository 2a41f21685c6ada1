"""NUMERICS.md states the calibration study's numbers as tests/device/numerics_study.py
prints them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import LONG_TESTS
from tests.device import numerics_study as study
from ttlgen.device.calibration import Calibration, load_calibration

NUMERICS_MD = Path(study.__file__).resolve().parents[2] / "ttlgen" / "device" / "NUMERICS.md"
RATIO_TABLE = "Ratios to hardware, mean_abs / 1 - PCC"
ABSOLUTE_TABLE = "The same runs in absolute terms"
#: The seeds NUMERICS.md's tables are run with (the study's default).
SEEDS = range(4)
#: The suite checks the columns of the rows with K <= 4 (under a second of study, every
#: method); TTLGEN_LONG_TESTS=1 checks every column (the K = 16 rows cost seconds more).
MAX_K = 1 << 30 if LONG_TESTS else 4


def _table_after(text: str, marker: str) -> dict[str, list[str]]:
    """The rows of the first Markdown table after ``marker``: the row's name (its code span,
    else its text) -> its cells."""
    lines = text[text.index(marker) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows: dict[str, list[str]] = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        label, *cells = (cell.strip() for cell in line.strip("|").split("|"))
        name = re.search(r"`([^`]+)`", label)
        rows[name.group(1) if name else label] = cells
    return rows


@pytest.fixture(scope="module")
def calibration() -> Calibration:
    return load_calibration()


@pytest.fixture(scope="module")
def columns(calibration: Calibration) -> list[int]:
    """The hardware rows (table columns) checked: each method has one."""
    chosen = [i for i, row in enumerate(calibration.rows) if row.k <= MAX_K]
    assert {calibration.rows[i].method for i in chosen} == {row.method for row in calibration.rows}
    return chosen


@pytest.fixture(scope="module")
def results(calibration: Calibration, columns: list[int]) -> dict[str, list[study.Result]]:
    rows = tuple(calibration.rows[i] for i in columns)
    return {m.name: study.study(m, rows, SEEDS) for m in study.CANDIDATES}


def test_ratio_table_of_the_candidates_is_what_the_study_prints(
    results: dict[str, list[study.Result]], columns: list[int]
) -> None:
    table = {name: [cells[i] for i in columns] for name, cells in _table_after(NUMERICS_MD.read_text(encoding="utf-8"), RATIO_TABLE).items()}
    expected = {
        name: [
            f"{r.mean_ratio:.2f} / {r.one_minus_pcc_ratio:.2f} / {r.max_ratio:.2f}" + ("" if r.within_targets else " ✗")
            for r in rs
        ]
        for name, rs in results.items()
    }
    assert table == expected


def test_absolute_table_of_the_candidates_is_what_the_study_prints(
    calibration: Calibration, results: dict[str, list[study.Result]], columns: list[int]
) -> None:
    table = {name: [cells[i] for i in columns] for name, cells in _table_after(NUMERICS_MD.read_text(encoding="utf-8"), ABSOLUTE_TABLE).items()}
    assert table.pop("hardware") == [
        f"{r.mean_abs:g} / {r.one_minus_pcc:.3e} / {r.max_abs:g}" for r in (calibration.rows[i] for i in columns)
    ]
    expected = {
        name: [f"{r.mean_abs:.4f} / {r.one_minus_pcc:.3e} / {r.max_abs:.3f}" for r in rs]
        for name, rs in results.items()
    }
    assert table == expected
