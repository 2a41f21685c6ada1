"""Schema validation of a spec tree, skipping documents already known to be valid.

Validation is a pure function of a document's data and its kind's schema, so a
document that passed once passes again: its content hash is recorded in the cache. A
document that changed is first put to the fast validator (accept.py), and jsonschema
(slow to import and to run) only sees the ones it cannot say yes to, to locate their errors.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from ttlgen import cache
from ttlgen.errors import Diagnostic
from ttlgen.spec.document import SpecDocument
from ttlgen.spec.kinds import find_kind, schema_text
from ttlgen.validate.accept import accepts


def _validity_record(document: SpecDocument) -> Path | None:
    kind = find_kind(document.kind, document.version)
    if kind is None or not cache.enabled():
        return None
    digest = hashlib.sha256(schema_text(kind.schema_file).encode())
    digest.update(json.dumps(document.data, sort_keys=True, default=str).encode())
    return cache.cache_root() / "valid" / digest.hexdigest()


def validate_documents(documents: Sequence[SpecDocument]) -> list[Diagnostic]:
    records = {id(d): _validity_record(d) for d in documents}
    pending = [d for d in documents if (record := records[id(d)]) is None or not record.exists()]
    diagnostics: list[Diagnostic] = []
    for document in pending:
        if accepts(document):
            found = []
        else:
            from ttlgen.validate.schema import validate_document

            found = validate_document(document)
        diagnostics.extend(found)
        record = records[id(document)]
        if not found and record is not None:
            try:
                record.parent.mkdir(parents=True, exist_ok=True)
                record.touch()
            except OSError:
                pass  # an unwritable cache only costs speed
    return diagnostics
