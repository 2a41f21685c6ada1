"""The valid names closest to a misspelt one: the one "did you mean" rule.

It lives in the resolver library because both of its users need it: the library's own
messages (an unknown target) and ttlgen's (``ttlgen.errors.did_you_mean``), and this
package may import nothing outside itself.

difflib's similarity ratio judges long names well but cannot see a typo in a short one:
one wrong letter of three is a ratio of 0.67 (``ouy`` for ``out``), below any cutoff that
keeps long names from suggesting unrelated ones. So a name is also close when one edit
(a letter inserted, deleted, replaced, or two neighbours swapped) makes it the candidate,
unless that edit replaces the whole name (``x`` and ``y`` have nothing in common).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CLOSE = 0.7  # difflib's similarity ratio of a plausible typo
AS_CLOSE = 0.1  # how much less similar than the best a further suggestion may be
MOST = 3  # suggestions offered at most


def one_edit_apart(a: str, b: str) -> bool:
    """Whether one insertion, deletion, replacement or swap of neighbours turns ``a``
    into ``b`` (the optimal-string-alignment distance is 1), keeping a letter of it."""
    if a == b or abs(len(a) - len(b)) > 1 or max(len(a), len(b)) < 2:
        return False
    if len(a) == len(b):
        differ = [i for i in range(len(a)) if a[i] != b[i]]
        if len(differ) == 1:
            return True
        i = differ[0]
        return len(differ) == 2 and differ[1] == i + 1 and a[i] == b[i + 1] and a[i + 1] == b[i]
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = next((i for i in range(len(short)) if short[i] != long[i]), len(short))
    return short[i:] == long[i + 1 :]


def closest_names(name: str, candidates: Iterable[str]) -> tuple[str, ...]:
    """The candidates close to ``name``, closest first; only those about as close as the
    closest one, so a one-letter typo of ``tile_exp`` suggests it alone, not every
    ``tile_`` name of the same length."""
    scored = []
    for candidate in sorted({str(c) for c in candidates}):
        matcher = difflib.SequenceMatcher(None, name, candidate)
        score = matcher.ratio() if matcher.real_quick_ratio() >= CLOSE and matcher.quick_ratio() >= CLOSE else 0.0
        if one_edit_apart(name, candidate):
            score = max(score, CLOSE)
        if score >= CLOSE:
            scored.append((score, candidate))
    if not scored:
        return ()
    best = max(score for score, _ in scored)
    ranked = sorted(scored, key=lambda sc: -sc[0])
    return tuple(candidate for score, candidate in ranked if score >= best - AS_CLOSE)[:MOST]


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'tile_add'?)`` for the closest valid names, or ``""`` when none is close."""
    close = closest_names(name, candidates)
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)" if close else ""
