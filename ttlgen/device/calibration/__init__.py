"""Hardware measurements the emulator's numerics are calibrated on.

``hardware_accuracy.json`` holds the released rows of TT-Lang's hardware measurement of bf16 K
accumulation (its ``source`` and ``conditions`` say where they come from and how they were
taken). ``ttlgen accuracy --hardware`` prints them beside the emulated rows, and the
calibration test holds the emulator to :data:`MEAN_ABS_TOLERANCE` and
:data:`ONE_MINUS_PCC_FACTOR` on them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).resolve().parent / "hardware_accuracy.json"

#: The emulator's mean_abs on a calibration row must be within this fraction of hardware's.
MEAN_ABS_TOLERANCE = 0.15
#: ... and its 1 - PCC within this factor of hardware's (either way).
ONE_MINUS_PCC_FACTOR = 1.5


class CalibrationError(ValueError):
    """The calibration data file is malformed; the message names the file and the key."""


@dataclass(frozen=True)
class HardwareRow:
    method: str
    k: int
    block: int
    max_abs: float
    mean_abs: float
    pcc: float

    @property
    def one_minus_pcc(self) -> float:
        return 1.0 - self.pcc


#: A measurement condition's value, a JSON scalar kept as the data file types it.
ConditionValue = str | int | float | bool


@dataclass(frozen=True)
class Calibration:
    source: str
    conditions: tuple[tuple[str, ConditionValue], ...]
    rows: tuple[HardwareRow, ...]

    def conditions_text(self) -> str:
        """The conditions on one line, each value spelled as in the data file (``false``)."""
        return "; ".join(f"{k}: {v if isinstance(v, str) else json.dumps(v)}" for k, v in self.conditions)

    def row(self, method: str, k: int, block: int) -> HardwareRow | None:
        for r in self.rows:
            if (r.method, r.k, r.block) == (method, k, block):
                return r
        return None


@dataclass(frozen=True)
class Ratios:
    """Emulated / hardware, per column (1 - PCC for the PCC column)."""

    max_abs: float
    mean_abs: float
    one_minus_pcc: float

    def within_targets(self) -> bool:
        return (
            abs(self.mean_abs - 1.0) <= MEAN_ABS_TOLERANCE
            and 1.0 / ONE_MINUS_PCC_FACTOR <= self.one_minus_pcc <= ONE_MINUS_PCC_FACTOR
        )


def ratios(max_abs: float, mean_abs: float, pcc: float, hw: HardwareRow) -> Ratios:
    return Ratios(max_abs / hw.max_abs, mean_abs / hw.mean_abs, (1.0 - pcc) / hw.one_minus_pcc)


def _field(row: dict[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in row:
        raise CalibrationError(f"{DATA_FILE}: {where}: missing key {key!r}")
    value = row[key]
    ok = isinstance(value, kind) and not isinstance(value, bool)
    if kind is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok:
        raise CalibrationError(
            f"{DATA_FILE}: {where}.{key}: expected {kind.__name__}, got {value!r}"
        )
    return value


def load_calibration(path: Path = DATA_FILE) -> Calibration:
    """Read and check the calibration rows."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CalibrationError(f"{path}: {exc}") from exc
    if not isinstance(data, dict):
        raise CalibrationError(f"{path}: top level must be an object")
    source = _field(data, "source", str, "top level")
    conditions = data.get("conditions", {})
    if not isinstance(conditions, dict):
        raise CalibrationError(f"{path}: conditions: expected an object")
    for key, value in conditions.items():
        if not isinstance(value, str | int | float | bool):
            raise CalibrationError(
                f"{path}: conditions.{key}: expected a string, number or boolean, got {value!r}"
            )
    rows: list[HardwareRow] = []
    raw_rows = data.get("rows")
    if not isinstance(raw_rows, list) or not raw_rows:
        raise CalibrationError(f"{path}: rows: expected a non-empty list")
    for i, raw in enumerate(raw_rows):
        where = f"rows[{i}]"
        if not isinstance(raw, dict):
            raise CalibrationError(f"{path}: {where}: expected an object")
        row = HardwareRow(
            method=_field(raw, "method", str, where),
            k=_field(raw, "k", int, where),
            block=_field(raw, "block", int, where),
            max_abs=float(_field(raw, "max_abs", float, where)),
            mean_abs=float(_field(raw, "mean_abs", float, where)),
            pcc=float(_field(raw, "pcc", float, where)),
        )
        if any((r.method, r.k, r.block) == (row.method, row.k, row.block) for r in rows):
            raise CalibrationError(f"{path}: {where}: repeats ({row.method}, K={row.k}, block={row.block})")
        if not 0.0 < row.pcc < 1.0 or row.mean_abs <= 0.0 or row.max_abs <= 0.0:
            raise CalibrationError(f"{path}: {where}: errors must be positive and 0 < pcc < 1")
        rows.append(row)
    return Calibration(
        source=source,
        conditions=tuple(conditions.items()),
        rows=tuple(rows),
    )
