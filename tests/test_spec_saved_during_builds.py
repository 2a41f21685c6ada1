"""A spec saved while builds run: every tree a build writes is the one the specs it
records in MANIFEST give (the bytes hashed are the bytes used), never a mix.

The builds read the real specs without the kernel specs but the one saved (what else the
tree holds is not the point: tests/tree_support.py); TTLGEN_LONG_TESTS=1 runs more builds of
the whole real specs, TTLGEN_STRESS_BUILDS=N runs N builds."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import LONG_TESTS, SPECS, run_cli
from tests.tree_support import small_specs, tree
from ttlgen.pipeline import render_specs

EDITED = "kernels/elementwise.yaml"
BUILDS = int(os.environ.get("TTLGEN_STRESS_BUILDS", "6" if LONG_TESTS else "4"))


# Saves the two versions in turn, in place (truncate, then write), every 5 ms.
SAVER = """
import sys, time
from pathlib import Path
spec, versions = Path(sys.argv[1]), sorted(Path(sys.argv[2]).iterdir())
turn = 0
while True:
    spec.write_bytes(versions[turn % 2].read_bytes())
    turn += 1
    time.sleep(0.005)
"""


def versions_dir(tmp_path: Path, versions: list[bytes]) -> Path:
    folder = tmp_path / "versions"
    folder.mkdir()
    for number, version in enumerate(versions):
        (folder / str(number)).write_bytes(version)
    return folder


def recorded_input(manifest: bytes, source: str) -> str:
    found = re.search(rf"^input ([0-9a-f]{{64}}) {re.escape(source)}$", manifest.decode(), re.MULTILINE)
    assert found, f"MANIFEST records no input {source}"
    return found.group(1)


def test_every_tree_built_while_a_spec_is_saved_matches_the_specs_its_manifest_records(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    if LONG_TESTS:
        shutil.copytree(SPECS, specs)
    else:
        small_specs(specs, keep=[EDITED])
    spec = specs / EDITED
    versions = [spec.read_bytes(), spec.read_bytes().replace(b"summary: ", b"summary: edited ", 1)]
    expected: dict[str, dict[str, bytes]] = {}
    for version in versions:
        spec.write_bytes(version)
        files = render_specs(specs)
        expected[recorded_input(files["MANIFEST"], f"specs/{EDITED}")] = files

    # The saver is its own process, as an editor is: a thread would share the GIL with the
    # in-process build and hold the file truncated for a whole switch interval.
    saver = subprocess.Popen([sys.executable, "-c", SAVER, str(spec), str(versions_dir(tmp_path, versions))])
    outcomes = []
    try:
        for _ in range(BUILDS):
            result = run_cli("build", "--specs", specs, "--out", tmp_path / "out")
            outcomes.append(result.exit_code)
            assert result.exit_code in (0, 2), result.stderr  # 2: the build read a half-saved file
            if result.exit_code == 0:
                built = tree(tmp_path / "out")
                assert built == expected[recorded_input(built["MANIFEST"], f"specs/{EDITED}")]
    finally:
        saver.kill()
        saver.wait()
    assert 0 in outcomes
