"""Where ttlgen keeps its caches, and whether caching is on.

Every cache (tree records, schema-validity records, compiled templates, the emulator's
builds) lives under one root so that TTLGEN_CACHE_DIR moves all of them and
TTLGEN_NO_CACHE=1 turns all of them off. A cache only ever costs or saves time: no
result may depend on it.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    explicit = os.environ.get("TTLGEN_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ttlgen"


def enabled() -> bool:
    return os.environ.get("TTLGEN_NO_CACHE", "") in ("", "0")
