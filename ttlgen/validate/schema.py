"""JSON Schema validation of spec documents, with errors located at the offending node.

jsonschema's own messages print Python reprs of whole subtrees; these are rewritten to
say what is wrong and what would be valid, in the user's terms.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

from ttlgen.errors import Diagnostic, KeyPath, describe_value, did_you_mean
from ttlgen.resolver.closest import closest_names
from ttlgen.spec.document import SpecDocument
from ttlgen.spec.kinds import SpecKind, find_kind

_TYPE_NAMES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


def _is_integer(checker: Any, instance: Any) -> bool:
    # JSON Schema counts 32.0 as an integer; a spec that writes a float where a count,
    # width or index belongs is a mistake, and generated code would carry the float.
    return isinstance(instance, int) and not isinstance(instance, bool)


def _frozen(value: Any) -> Any:
    """A hashable stand-in with JSON equality (1 == 1.0, true != 1)."""
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, int | float):
        return ("number", value)
    if isinstance(value, list):
        return ("array", tuple(_frozen(v) for v in value))
    if isinstance(value, dict):
        return ("object", frozenset((k, _frozen(v)) for k, v in value.items()))
    return (type(value).__name__, value)


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterable[ValidationError]:
    # jsonschema compares every pair of a list that mixes types: quadratic, so a long
    # list took minutes. Hashing each item once keeps validation linear.
    if not unique or not validator.is_type(instance, "array"):
        return
    first: dict[Any, int] = {}
    for index, item in enumerate(instance):
        key = _frozen(item)
        if key in first:
            yield ValidationError(
                f"{describe_value(item)} repeats item [{first[key]}]; items must be unique", path=[index]
            )
            return
        first[key] = index


class _MissingKey(ValidationError):
    """A required key that is absent, by name: jsonschema's own error names it only in
    its text, and one error per missing key must say which."""

    def __init__(self, key: str) -> None:
        super().__init__(f"missing required key {key!r}")
        self.key = key


def _required(validator: Any, required: Any, instance: Any, schema: Any) -> Iterable[ValidationError]:
    if validator.is_type(instance, "object"):
        yield from (_MissingKey(key) for key in required if key not in instance)


def _strict_number(instance: Any, allowed: Iterable[Any]) -> bool:
    # JSON equality makes 32.0 equal to 32; an integer choice takes integers only.
    return not (isinstance(instance, float) and all(isinstance(v, int) and not isinstance(v, bool) for v in allowed))


def _enum(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterable[ValidationError]:
    if not _strict_number(instance, allowed):
        yield ValidationError(f"expected an integer, got {describe_value(instance)}")
        return
    yield from _BASE_KEYWORDS["enum"](validator, allowed, instance, schema)


def _const(validator: Any, const: Any, instance: Any, schema: Any) -> Iterable[ValidationError]:
    if not _strict_number(instance, [const]):
        yield ValidationError(f"expected an integer, got {describe_value(instance)}")
        return
    yield from _BASE_KEYWORDS["const"](validator, const, instance, schema)


@functools.cache
def _ecma_pattern(pattern: str) -> re.Pattern[str]:
    """A schema pattern with ECMA-262's meaning of ``$``: the end of the text. Python's ``$``
    also matches before a final newline, so ``^[a-z]+$`` would pass a name ending in one
    (which editors, using ECMA-262, reject) and print the newline into generated code."""
    out, escaped, in_class = [], False, False
    for ch in pattern:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "[":
            in_class = True
        elif ch == "]":
            in_class = False
        elif ch == "$" and not in_class:
            out.append("\\Z")
            continue
        out.append(ch)
    return re.compile("".join(out))


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterable[ValidationError]:
    if validator.is_type(instance, "string") and not _ecma_pattern(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


_BASE_KEYWORDS = dict(Draft202012Validator.VALIDATORS)
_SpecValidator = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    validators={"uniqueItems": _unique_items, "enum": _enum, "const": _const, "pattern": _pattern, "required": _required},
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer),
)


@functools.cache
def validator_for(kind: SpecKind) -> Any:
    # The schemas themselves are checked against the metaschema by the test suite;
    # doing it on every run would cost more than validating all the specs.
    return _SpecValidator(kind.schema())




def _one_of(values: Iterable[Any]) -> str:
    return ", ".join(describe_value(v) for v in values)


def _unknown_keys(schema: Any, instance: dict[str, Any]) -> list[str]:
    schema = schema if isinstance(schema, dict) else {}
    allowed = set(schema.get("properties", {}))
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    return sorted(
        k for k in instance if k not in allowed and not any(p.search(k) for p in patterns)
    )


_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}


def _json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), "null")


def _refuses_type(error: ValidationError) -> bool:
    """Whether ``error`` says its alternative takes no value of the instance's type: a
    mapping put to a string choice is the wrong alternative, not a wrong string."""
    if error.relative_path:
        return False
    kind = _json_type(error.instance)
    if error.validator == "type":
        return True
    if error.validator in ("enum", "const"):
        expected: Any = error.validator_value
        allowed = expected if error.validator == "enum" else [expected]
        same = {kind} | ({"integer", "number"} if kind in ("integer", "number") else set())
        return not any(_json_type(v) in same for v in allowed)
    return False


def _alternative(error: ValidationError) -> list[ValidationError]:
    """The errors of the alternative of a failed oneOf/anyOf that the value was meant for:
    one that takes the value's type, and of those the one whose errors lie deepest (it
    matched the most); on a tie, the first."""
    groups: dict[Any, list[ValidationError]] = {}
    for sub in error.context or ():
        groups.setdefault(sub.relative_schema_path[0], []).append(sub)

    def fit(group: list[ValidationError]) -> tuple[bool, int]:
        return (not any(_refuses_type(e) for e in group), max(len(e.absolute_path) for e in group))

    return max(groups.values(), key=fit)


def _chosen(errors: Iterable[ValidationError]) -> Iterable[ValidationError]:
    """Each failed oneOf/anyOf replaced by the errors of the alternative meant (nested
    alternatives too), so they are reported, and grouped by cause, like any other."""
    for error in errors:
        if error.validator in ("oneOf", "anyOf") and error.context:
            yield from _chosen(_alternative(error))
        else:
            yield error


def _type_alone(errors: Sequence[ValidationError]) -> list[ValidationError]:
    """``errors`` without those about a value its type error already reports: beside
    "expected an integer, got inf", "inf is greater than the maximum 255" says nothing the
    user can act on (an integer of the right size is the one fix either way)."""
    mistyped = {(tuple(e.absolute_path), id(e.instance)) for e in errors if e.validator == "type"}
    # By identity as well as path: a key checked by propertyNames shares its mapping's path.
    return [e for e in errors if e.validator == "type" or (tuple(e.absolute_path), id(e.instance)) not in mistyped]


def _key_named(error: ValidationError) -> str | None:
    """The mapping key ``error`` is about when it comes from ``propertyNames``: jsonschema
    validates a key as the instance at its mapping's path, so the key is the instance."""
    schema_path = list(error.absolute_schema_path)
    for index, part in enumerate(schema_path):
        if part == "propertyNames" and (index == 0 or schema_path[index - 1] not in ("properties", "$defs")):
            return error.instance if isinstance(error.instance, str) else None
    return None


def _message(error: ValidationError) -> tuple[KeyPath, str, bool]:
    """Return (path, message, point_at_key) for one schema error."""
    path, message, at_key = _value_message(error)
    key = _key_named(error)
    if key is not None and not at_key:
        return (*path, key), message, True
    return path, message, at_key


def _value_message(error: ValidationError) -> tuple[KeyPath, str, bool]:
    path: KeyPath = tuple(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    custom = schema.get("x-message")
    validator = error.validator
    value: Any = error.instance
    expected: Any = error.validator_value
    # A custom message explains the value's form; a value of the wrong type or length gets
    # the plain "expected a string, got 5" instead.
    if isinstance(custom, str) and validator not in (
        "required", "additionalProperties", "unevaluatedProperties", "type", "maxLength"
    ):
        # Only {value} is substituted: the rest of the text may show braces literally.
        return path, custom.replace("{value}", describe_value(value)), False
    if validator in ("enum", "const") and not _strict_number(value, expected if validator == "enum" else [expected]):
        return path, error.message, False
    if validator == "enum":
        return path, f"{describe_value(value)} is not one of {_one_of(expected)}", False
    if validator == "const":
        return path, f"expected {describe_value(expected)}, got {describe_value(value)}", False
    if validator == "type":
        wanted = expected
        names = [wanted] if isinstance(wanted, str) else list(wanted)
        wanted_text = " or ".join(_TYPE_NAMES.get(n, n) for n in names)
        return path, f"expected {wanted_text}, got {describe_value(value)}", False
    if validator in ("additionalProperties", "unevaluatedProperties"):
        allowed = sorted(schema.get("properties", {}))
        extras = _unknown_keys(schema, value) if isinstance(value, dict) else []
        key = extras[0] if extras else "?"
        valid = f"; valid keys: {', '.join(allowed)}{did_you_mean(key, allowed)}" if allowed else ""
        return (*path, key), f"unknown key {key!r}{valid}", True
    if validator == "pattern":
        return path, f"{describe_value(value)} does not match the pattern {expected!r}", False
    if validator == "minimum":
        return path, f"{describe_value(value)} is less than the minimum {expected}", False
    if validator == "maximum":
        return path, f"{describe_value(value)} is greater than the maximum {expected}", False
    if validator == "maxLength":
        # Names are capped at the 63 characters C guarantees significant in an identifier.
        return path, f"{value[:24]!r}... is {len(value)} characters long; at most {expected} are allowed", False
    if validator == "minItems":
        return path, f"expected at least {expected} item(s), got {len(value)}", False
    if validator == "maxItems":
        return path, f"expected at most {expected} item(s), got {len(value)}", False
    if validator == "minProperties":
        return path, f"expected at least {expected} key(s)", False
    return path, error.message, False


def _expand(errors: Iterable[ValidationError]) -> Iterable[ValidationError]:
    for error in errors:
        if error.validator in ("additionalProperties", "unevaluatedProperties") and isinstance(error.instance, dict):
            extras = _unknown_keys(error.schema, error.instance)
            # One diagnostic per unknown key, each at its own key.
            for key in extras:
                yield ValidationError(
                    error.message, validator=error.validator, path=error.absolute_path,
                    instance={key: error.instance[key]}, schema=error.schema,
                    validator_value=error.validator_value,
                )
        else:
            yield error


def _misspellings(errors: Sequence[ValidationError]) -> dict[tuple[KeyPath, str], int]:
    """(mapping path, key) -> the index of the unknown-key error there that suggests the
    key: a required key written misspelt is missing only because of that typo."""
    meant: dict[tuple[KeyPath, str], int] = {}
    for index, error in enumerate(errors):
        if error.validator in ("additionalProperties", "unevaluatedProperties") and isinstance(error.instance, dict):
            allowed = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
            for key in error.instance:
                for candidate in closest_names(str(key), allowed):
                    meant.setdefault((tuple(error.absolute_path), candidate), index)
    return meant


def validate_document(document: SpecDocument) -> list[Diagnostic]:
    """The document's schema errors, located; a missing key that an unknown key beside it
    misspells is not shown but counted against that key's error, the root cause."""
    kind = find_kind(document.kind, document.version)
    if kind is None:  # load already rejected unknown kinds
        return []
    errors = list(_expand(_type_alone(list(_chosen(validator_for(kind).iter_errors(document.data))))))
    misspelt = _misspellings(errors)
    causes = [
        misspelt.get((tuple(error.absolute_path), error.key)) if isinstance(error, _MissingKey) else None
        for error in errors
    ]
    followers = Counter(cause for cause in causes if cause is not None)
    diagnostics = []
    for index, error in enumerate(errors):
        if causes[index] is not None:
            continue
        path, message, at_key = _message(error)
        mark = document.key_mark(path) if at_key else document.mark(path)
        diagnostics.append(Diagnostic(mark, message, consequences=followers[index]))
    return diagnostics
