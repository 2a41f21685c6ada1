"""ttlgen's records compile their dataclass methods once per machine, not once per process
(ttlgen/dataclass_code.py), and behave exactly as if they had been compiled."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# Run in a fresh interpreter: what the record changes is how a process starts.
PROBE = r"""
import dataclasses, inspect, json
import ttlgen.generate
from ttlgen import dataclass_code
from ttlgen.model.kernels import KernelsModel
from ttlgen.errors import Diagnostic

@dataclasses.dataclass(frozen=True)
class Outside:
    x: int

def described(cls):
    return {
        "signature": str(inspect.signature(cls)),
        "init_annotations": {k: str(v) for k, v in cls.__init__.__annotations__.items()},
        "methods": sorted(n for n in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__")
                          if n in cls.__dict__),
    }

print(json.dumps({
    "compiled": dataclass_code._compiled,
    "recorded": len(dataclass_code._known),
    "outside_recorded": any("Outside" in text or "(self,x:" in text for text in dataclass_code._known),
    "kernels_model": described(KernelsModel),
    "diagnostic": described(Diagnostic),
}, sort_keys=True))
"""


def probe(cache_dir: Path, **env: str) -> dict[str, object]:
    environment = {k: v for k, v in os.environ.items() if k != "TTLGEN_NO_CACHE"}
    environment.update(TTLGEN_CACHE_DIR=str(cache_dir), **env)
    done = subprocess.run([sys.executable, "-c", PROBE], env=environment, capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def record_file(cache_dir: Path) -> Path:
    (found,) = (cache_dir / "dataclass-code").iterdir()
    return found


def test_a_second_process_compiles_no_dataclass_method_of_ttlgen(tmp_path: Path) -> None:
    first = probe(tmp_path)
    second = probe(tmp_path)
    assert first["compiled"] > 100
    assert second["compiled"] == 0
    assert second["recorded"] == first["recorded"]


def test_records_from_the_cache_have_the_methods_and_signatures_of_compiled_ones(tmp_path: Path) -> None:
    probe(tmp_path)
    cached = probe(tmp_path)
    uncached = probe(tmp_path / "unused", TTLGEN_NO_CACHE="1")
    assert uncached["recorded"] == 0
    for name in ("kernels_model", "diagnostic"):
        assert cached[name] == uncached[name]


def test_dataclasses_outside_ttlgen_are_compiled_as_the_standard_library_does(tmp_path: Path) -> None:
    assert probe(tmp_path)["outside_recorded"] is False


def test_a_damaged_record_is_compiled_again_and_replaced(tmp_path: Path) -> None:
    probe(tmp_path)
    record_file(tmp_path).write_bytes(b"\x00not marshal")
    again = probe(tmp_path)
    assert again["compiled"] == again["recorded"] > 100
    assert probe(tmp_path)["compiled"] == 0


def test_an_unwritable_cache_only_costs_time(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    result = probe(blocked)
    assert result["compiled"] == result["recorded"] > 100


SMALL_PROCESS = r"""
import sys, types
import ttlgen.errors
module = types.ModuleType("ttlgen._probe_only")
sys.modules[module.__name__] = module
exec("import dataclasses\n@dataclasses.dataclass(frozen=True)\nclass Probe:\n    only_here: int\n", module.__dict__)
from ttlgen import dataclass_code
assert dataclass_code._compiled >= 1
"""


def test_a_process_using_few_records_keeps_the_records_of_others(tmp_path: Path) -> None:
    recorded = probe(tmp_path)["recorded"]
    environment = {k: v for k, v in os.environ.items() if k != "TTLGEN_NO_CACHE"}
    subprocess.run([sys.executable, "-c", SMALL_PROCESS], env={**environment, "TTLGEN_CACHE_DIR": str(tmp_path)}, check=True)
    after = probe(tmp_path)
    assert after["compiled"] == 0
    assert after["recorded"] > recorded  # the probe's records and the new class's


def test_a_record_whose_bytes_changed_is_compiled_again(tmp_path: Path) -> None:
    probe(tmp_path)
    record = record_file(tmp_path)
    data = record.read_bytes()
    record.write_bytes(data.replace(b"__init__", b"__inix__", 1))  # still valid marshal
    again = probe(tmp_path)
    assert again["compiled"] > 100
