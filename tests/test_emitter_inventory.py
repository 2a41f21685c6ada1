"""Which modules are emitters, and of which shape, is recorded for ttlgen's code
(ttlgen/emit/__init__.py): a process that finds the record imports an emitter's module
only when that emitter runs, and the record always says what a scan of the package says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ttlgen import cache
from ttlgen.emit import _inventory_path, _scan, emitters

# Prints the emitters found, which emitter modules that imported, and which the first
# project emitter's call (on nothing: it fails inside the emitter) imported besides.
PROBE = """
import json, sys
from ttlgen.emit import emitters
found = emitters()
def loaded():
    return sorted(m for m in sys.modules if m.startswith("ttlgen.emit.") and not m.startswith("ttlgen.emit._"))
before = loaded()
first = next(e for e in found if e.project is not None)
try:
    first.project(None, None, None)
except Exception:
    pass
print(json.dumps({"found": [[e.name, "project" if e.project else "kernel"] for e in found],
                  "before": before, "after": loaded(), "first": first.name}))
"""


def probe(cache_dir: Path, **env: str) -> dict[str, Any]:
    run_env = {**os.environ, "TTLGEN_CACHE_DIR": str(cache_dir), **env}
    out = subprocess.run([sys.executable, "-c", PROBE], env=run_env, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def test_a_recorded_inventory_imports_an_emitter_module_only_when_it_runs(tmp_path: Path) -> None:
    first = probe(tmp_path)  # scans and records
    second = probe(tmp_path)
    assert second["found"] == first["found"]
    assert second["before"] == []
    assert second["after"] == [f"ttlgen.emit.{second['first']}"]


def test_without_a_record_every_emitter_module_is_imported_and_checked(tmp_path: Path) -> None:
    scanned = probe(tmp_path, TTLGEN_NO_CACHE="1")
    assert scanned["before"] == sorted(f"ttlgen.emit.{name}" for name, _ in scanned["found"])


def test_the_recorded_inventory_is_what_a_scan_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(tmp_path))
    emitters()
    assert cache.read_marshalled(_inventory_path()) == _scan()
    found = emitters()
    assert [(e.name, "project" if e.project else "kernel") for e in found] == _scan()
    assert all((e.project is None) != (e.kernel is None) for e in found)


def test_a_damaged_record_is_scanned_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTLGEN_CACHE_DIR", str(tmp_path))
    emitters()
    cache.write_sealed(_inventory_path(), b"\x00not marshal")
    assert [e.name for e in emitters()] == [name for name, _ in _scan()]
