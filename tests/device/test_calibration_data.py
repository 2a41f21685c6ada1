"""The hardware calibration data file as ttlgen.device.calibration reads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ttlgen.device.calibration import DATA_FILE, CalibrationError, load_calibration


def test_conditions_keep_the_json_types_of_the_data_file() -> None:
    conditions = dict(load_calibration().conditions)
    assert conditions == json.loads(DATA_FILE.read_text(encoding="utf-8"))["conditions"]
    assert conditions["fp32_dest_acc_en"] is False


def test_conditions_text_spells_values_as_the_data_file_does() -> None:
    text = load_calibration().conditions_text()
    assert "fp32_dest_acc_en: false;" in text and "math_fidelity: HiFi4" in text


def test_a_condition_that_is_not_a_json_scalar_is_a_calibration_error(tmp_path: Path) -> None:
    data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    data["conditions"]["math_fidelity"] = ["HiFi4"]
    path = tmp_path / "hw.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CalibrationError, match=r"conditions\.math_fidelity: expected a string, number or boolean, got \['HiFi4'\]"):
        load_calibration(path)
