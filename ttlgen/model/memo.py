"""A domain model built once for its spec files' content, and loaded after that.

A domain builder is a pure function of the documents it is given (and of ttlgen's code):
the tt-metal API levels, for one, parse every C++ declaration of two levels and scan the
emulator's glue, a fifth of a build's time, for files that hardly ever change. So a
model that built without any diagnostic is recorded (pickle, with the hash of its bytes)
under a key hashing ttlgen's code and each document's names, kind and content (its
data and positions, `SpecDocument.digest`: what the builder reads); the names
are part of it because the model's marks print them. A build with errors records
nothing, so its errors are found and reported again next time, with the same
cross-domain suppression (`DiagnosticSink` ``breaks``) as on a first build. Loading a
pickle runs what it names, so a record is trusted as far as the cache directory is, like
the bytecode Python itself caches; the hash only guards against damage.
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from ttlgen import cache
from ttlgen.errors import DiagnosticSink
from ttlgen.fingerprint import code as code_fingerprint
from ttlgen.spec.document import SpecDocument

T = TypeVar("T")


def _record(domain: str, documents: Sequence[SpecDocument]) -> Path:
    digest = hashlib.sha256(code_fingerprint())
    digest.update(f"\0{domain}\0".encode())
    for document in documents:
        digest.update(f"{document.display}\0{document.source}\0{document.kind_id}\0{document.digest}\0".encode())
    return cache.cache_root() / "models" / digest.hexdigest()


def built_once(domain: str, documents: Sequence[SpecDocument], build: Callable[[], T], sink: DiagnosticSink, kind: type[T]) -> T:
    """``build()`` (which reads only ``documents`` and reports to ``sink``), or the model
    it returned for the same documents before."""
    if not cache.enabled():
        return build()
    record = _record(domain, documents)
    payload = cache.read_sealed(record)
    if payload is not None:
        try:
            loaded = pickle.loads(payload)
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
            loaded = None  # a record of other code: build
        if isinstance(loaded, kind):
            return loaded
    before = sink.count
    model = build()
    if sink.count == before:
        with contextlib.suppress(OSError, pickle.PicklingError):  # a cache that cannot be written only costs time
            cache.write_sealed(record, pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL))
    return model
