"""The README says which tests skip without ``../shared``: every test file that reads it."""

from __future__ import annotations

import re

from tests.conftest import REPO

# How a test reaches the directory beside the repository.
READS_SHARED = re.compile(r"""parent\s*/\s*["']shared["']|\.\./shared|/work/shared""")


def test_every_test_file_that_reads_shared_is_named_in_the_readme() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("Some tests need what a fresh clone may not have") :]
    section = section[: section.index("\n## ")]
    readers = sorted(
        path.relative_to(REPO).as_posix()
        for path in (REPO / "tests").rglob("*.py")
        if path.name != "test_readme_skips.py" and READS_SHARED.search(path.read_text(encoding="utf-8"))
    )
    assert readers, "no test reads ../shared any more: drop the README's line about it"
    for reader in readers:
        assert f"`{reader}`" in section, f"{reader} reads ../shared but the README's list of skips does not name it"
