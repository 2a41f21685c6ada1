"""Schema validation of a spec tree.

A document is first put to the fast validator (accept.py); jsonschema (slow to import and
to run) only sees the ones it cannot say yes to, and locates their errors.
"""

from __future__ import annotations

from collections.abc import Sequence

from ttlgen.errors import Diagnostic
from ttlgen.spec.document import SpecDocument
from ttlgen.validate.accept import accepts
from ttlgen.validate.numbers import non_finite_numbers


def validate_documents(documents: Sequence[SpecDocument]) -> list[Diagnostic]:
    diagnostics: list[Diagnostic] = []
    for document in documents:
        if not accepts(document):
            from ttlgen.validate.schema import validate_document

            # accepts() leaves every document holding a NaN or an infinity to this branch.
            diagnostics.extend(non_finite_numbers(document, validate_document(document)))
    return diagnostics
