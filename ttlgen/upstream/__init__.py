"""tt-metal as released: the pinned ttnn wheels, their kernel headers, and checks against them.

Each API level of the specs pins the release it follows (``release:`` in
``specs/tt_metal/<level>.yaml``). :func:`headers` gives a release's header tree (fetched
and extracted on first use, :mod:`ttlgen.upstream.fetch`); :mod:`ttlgen.upstream.compile`
compiles each generated kernel against the release of its target's level as tt-metal's
JIT would (:mod:`ttlgen.upstream.jit`); :mod:`ttlgen.upstream.ttnn_env` runs code against
the pinned ttnn in a Python 3.12 environment of its own. :mod:`ttlgen.upstream.release_api`
reads a release's kernel API from its headers with libclang, :mod:`ttlgen.upstream.api_check`
compares an API level's spec with it and :mod:`ttlgen.upstream.api_import` refreshes the spec
from it. The command line is ``ttlgen upstream`` (:mod:`ttlgen.upstream.cli`).

Importing this package imports nothing else: `ttlgen`'s start-up stays as fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ttlgen.model.tt_metal_api import Release


def headers(level_or_release: str | Release, specs: Path = Path("specs")) -> Path:
    """The directory holding ``tt_metal/`` as the pinned wheel ships it (the JIT's root):
    of an API level of ``specs`` by name, or of a release. Downloads and extracts it on
    first use; raises ``ttlgen.upstream.fetch.FetchError`` (one line) when that fails."""
    from ttlgen.upstream.fetch import fetch
    from ttlgen.upstream.project import release_of

    release = release_of(level_or_release, specs) if isinstance(level_or_release, str) else level_or_release
    return fetch(release)
