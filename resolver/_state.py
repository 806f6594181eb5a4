"""State-aware eligibility (DESIGN §4.7): declared requirements, checked fail-closed.

A catalog layer may declare, per tool, typed contracts on semantic state ids::

    "stateRequirements": {"talk_voice": {"channel": {"enum": ["discord", "voice"]}}}

Each contract is a JSON Schema (draft 2020-12 unless the schema names another draft with
``$schema``) that the host's value for that id must satisfy. The rules:

- The host passes no state (``TurnRequest.state is None``): nothing is checked; every tool
  behaves as it does without declarations (the stateless behaviour).
- The host passes state (a dict, even an empty one): for every candidate with declarations,
  each declared id must be present and its value must satisfy the schema. Otherwise the tool is
  excluded, fail-closed, with one `Exclusion(tool, field, why)` per unmet id.
- Tools without declarations are never checked. Nothing is inferred from names or descriptions.

Schemas are validated when a catalog layer loads (`schema_problem`); they must be
self-contained (only local ``#...`` references), so evaluating them never touches the network
or the disk. ``why`` describes the contract and the JSON type of the value, never the value
itself (state may carry identifiers). `jsonschema` is imported late: only a catalog that
declares requirements pays for it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import orjson

from ._types import Exclusion

if TYPE_CHECKING:  # pragma: no cover
    from jsonschema.protocols import Validator

MISSING_WHY = "missing from the host's state"
"""`Exclusion.why` when a declared id is absent from the state the host passed."""

OPENCLAW_STATE_IDS: Mapping[str, tuple[str, ...]] = {
    "channel": ("messageProvider", "channel"),
    "channelId": ("channelId",),
    "modelProviderId": ("modelProviderId",),
    "modelId": ("modelId",),
    "trigger": ("trigger",),
    "agentId": ("agentId",),
}
"""Semantic id -> the OpenClaw hook-context keys it is read from (first non-empty wins)."""

_MAX_CONSTRAINT_CHARS = 120
_MAX_CACHED_VALUE_CHARS = 256


def state_from_openclaw_ctx(ctx: Mapping[str, Any]) -> dict[str, Any]:
    """The execution state an OpenClaw host provides: its hook context under semantic ids.

    Only non-empty string values are taken; an id the context lacks is simply absent (a tool
    that declares it is then excluded, fail-closed).
    """
    state: dict[str, Any] = {}
    for semantic_id, keys in OPENCLAW_STATE_IDS.items():
        for key in keys:
            value = ctx.get(key)
            if isinstance(value, str) and value:
                state[semantic_id] = value
                break
    return state


def evaluate(
    requirements: Mapping[str, Mapping[str, Mapping[str, Any]]],
    tools: Iterable[str],
    state: Mapping[str, Any] | None,
) -> tuple[Exclusion, ...]:
    """Check each tool's declared requirements against `state`; return the unmet ones.

    ``state is None`` (the host passed no state) checks nothing. Tools without declarations
    are skipped. Order: tools as given, fields sorted by id.
    """
    if state is None:
        return ()
    found: list[Exclusion] = []
    for tool in tools:
        fields = requirements.get(tool)
        if not fields:
            continue
        for field_id in sorted(fields):
            why = check_field(field_id, fields[field_id], state)
            if why is not None:
                found.append(Exclusion(tool=tool, field=field_id, why=why))
    return tuple(found)


def check_field(field_id: str, schema: Mapping[str, Any], state: Mapping[str, Any]) -> str | None:
    """Why `state[field_id]` does not meet `schema`, or None when it does.

    Values are read as JSON (as a host would send them); small values are checked once per
    distinct (schema, value) pair and the answer cached, since state repeats from turn to turn.
    """
    if field_id not in state:
        return MISSING_WHY
    value = state[field_id]
    schema_json = _canonical(schema)
    try:
        value_json = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:  # not JSON-serializable: checked as is (fails any type contract)
        return _check(schema_json, value)
    if len(value_json) > _MAX_CACHED_VALUE_CHARS:
        return _check(schema_json, orjson.loads(value_json))
    return _cached_check(schema_json, value_json)


@functools.lru_cache(maxsize=4096)
def _cached_check(schema_json: str, value_json: str) -> str | None:
    return _check(schema_json, orjson.loads(value_json))


def _check(schema_json: str, value: Any) -> str | None:
    from jsonschema.exceptions import best_match
    from referencing.exceptions import Unresolvable

    validator = _validator(schema_json)
    try:
        if validator.is_valid(value):
            return None
        error = best_match(validator.iter_errors(value))
    except Unresolvable as exc:  # a local "#/..." reference that points nowhere
        return f"schema reference {_ref(exc.ref)!r} cannot be resolved"
    if error is None:  # pragma: no cover - is_valid said no, so there is an error
        return "value does not satisfy the schema"
    where = "".join(f"/{p}" for p in error.absolute_path)
    prefix = f"at {where}: " if where else ""
    keyword = "false" if error.validator is None else str(error.validator)
    return prefix + _describe(keyword, error.validator_value, error.instance)


def schema_problem(schema: Mapping[str, Any]) -> str | None:
    """What is wrong with a declared schema (for catalog validation), or None when it is valid."""
    from jsonschema.exceptions import SchemaError

    dialect = schema.get("$schema")
    known = _known_dialects()
    if dialect is not None and (not isinstance(dialect, str) or _norm(dialect) not in known):
        return (
            f"unknown $schema {dialect!r}; use one of {sorted(known)} "
            "or leave $schema out (draft 2020-12)"
        )
    cls = _validator_class(schema)
    try:
        cls.check_schema(dict(schema))
    except SchemaError as exc:
        where = "".join(f"/{p}" for p in exc.absolute_path)
        return f"invalid JSON Schema{f' at {where}' if where else ''}: {exc.message}"
    remote = _remote_ref(schema)
    if remote is not None:
        return (
            f"$ref {remote!r} is not local; state schemas must be self-contained "
            '(use "$defs" and "#/$defs/..." references)'
        )
    from referencing.exceptions import Unresolvable

    try:  # a probe run catches top-level references that point nowhere
        for _ in cls(dict(schema)).iter_errors(None):
            pass
    except Unresolvable as exc:
        return f"$ref {_ref(exc.ref)!r} cannot be resolved inside the schema"
    return None


# ---------------------------------------------------------------- helpers


def _canonical(schema: Mapping[str, Any]) -> str:
    return orjson.dumps(schema, option=orjson.OPT_SORT_KEYS).decode()


@functools.lru_cache(maxsize=1024)
def _validator(schema_json: str) -> Validator:
    """A compiled validator per distinct schema (bounded cache; schemas are catalog data)."""
    schema = orjson.loads(schema_json)
    validator: Validator = _validator_class(schema)(schema)
    return validator


def _validator_class(schema: Mapping[str, Any]) -> type[Validator]:
    from jsonschema.validators import Draft202012Validator, validator_for

    cls: type[Validator] = validator_for(schema, default=Draft202012Validator)
    return cls


@functools.cache
def _known_dialects() -> frozenset[str]:
    from jsonschema import validators

    classes = (
        validators.Draft4Validator,
        validators.Draft6Validator,
        validators.Draft7Validator,
        validators.Draft201909Validator,
        validators.Draft202012Validator,
    )
    ids = (c.META_SCHEMA.get("$id") or c.META_SCHEMA.get("id") for c in classes)
    return frozenset(_norm(i) for i in ids if isinstance(i, str))


def _ref(ref: str) -> str:
    return ref if ref.startswith("#") else f"#{ref}"


def _norm(uri: str) -> str:
    return uri.rstrip("#")


def _remote_ref(node: Any) -> str | None:
    """The first ``$ref``/``$dynamicRef`` that does not point inside the schema, if any."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in ("$ref", "$dynamicRef", "$recursiveRef") and isinstance(value, str):
                if not value.startswith("#"):
                    return value
            else:
                found = _remote_ref(value)
                if found is not None:
                    return found
    elif isinstance(node, list):
        for item in node:
            found = _remote_ref(item)
            if found is not None:
                return found
    return None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return f"non-JSON {type(value).__name__}"


def _short(constraint: Any) -> str:
    try:
        text = orjson.dumps(constraint).decode()
    except TypeError:
        text = repr(constraint)
    if len(text) > _MAX_CONSTRAINT_CHARS:
        text = text[: _MAX_CONSTRAINT_CHARS - 3] + "..."
    return text


def _describe(keyword: str, constraint: Any, instance: Any) -> str:
    """The failed contract in words: the keyword, its constraint, and the value's JSON type."""
    got = _json_type(instance)
    if keyword == "type":
        return f"expected type {_short(constraint)}, got {got}"
    if keyword == "enum":
        return f"{got} value is not one of the allowed values {_short(constraint)}"
    if keyword == "const":
        return f"{got} value is not the required constant {_short(constraint)}"
    if keyword == "false":  # a `false` subschema
        return "no value is allowed"
    return f"{got} value fails {keyword!r} {_short(constraint)}"
