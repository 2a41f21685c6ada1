"""Tests against tt-metal as released (the pinned ttnn wheels): what they need, and when
they may skip.

They need the package index (pip downloads the pinned wheels) and, for the hardware path,
a Python 3.12 interpreter. Where either is missing they skip with the reason; with
$TTLGEN_REQUIRE_UPSTREAM set (CI sets it, .ci/run), a skip would hide that the check did not
run, so it fails instead.

The wheels, their extracted headers and the ttnn environment are slow to make (seconds to
a minute) and keyed by the pinned sha256, so the suite keeps using the user's upstream
cache, as it does the emulator's builds, rather than the private cache root of the run
(tests/conftest.py moves $TTLGEN_CACHE_DIR when the session starts, after this module is
imported).
"""

from __future__ import annotations

import os

from ttlgen import cache
from ttlgen.upstream import fetch

os.environ.setdefault(fetch.CACHE_ENV, str(cache.cache_root() / "upstream"))
