"""The MCP tools' JSON schemas, and the check of a call's arguments against them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from jsonschema import Draft202012Validator, ValidationError

from maguyva.errors import ToolInputError
from maguyva.index.graph import RESOLUTIONS
from maguyva.query.intents import INTENTS, MAX_QUERY_CHARS, MODALITIES, PRESETS

#: Token estimate: UTF-8 bytes / BYTES_PER_TOKEN, rounded up. About what the tokenizers of
#: current models give on source code; used for budgets and for the `tokens` report.
BYTES_PER_TOKEN = 4
#: A result's snippet holds the first lines of its span within this many tokens.
SNIPPET_TOKENS = 100
MAX_TOP_K = 50
MAX_DEPTH = 6
#: Lists a tool returns are cut at these lengths (their totals are reported).
MAX_SYMBOLS = 20
MAX_CALLERS = 50
MAX_DEPENDANTS = 100

# Schemas -------------------------------------------------------------------------------------

REPO_ARGUMENT = {
    "type": "string",
    "description": "Only this repository: a name from index_status (or its root path). Default: all of them.",
}
TOP_K_ARGUMENT = {
    "type": "integer", "minimum": 1, "maximum": MAX_TOP_K, "default": 10,
    "description": f"How many results, one per file, best first (1-{MAX_TOP_K}; default 10).",
}  # fmt: skip
PRESET_ARGUMENT = {
    "type": "string", "enum": list(PRESETS), "default": "default",
    "description": "quick: semantic only (fastest); default: semantic, text and structural; "
    "thorough: adds the dependency graph.",
}  # fmt: skip
NULLABLE_STRING = {"type": ["string", "null"]}

TOKENS_REPORT = {
    "type": "object",
    "description": "Estimated tokens (UTF-8 bytes / 4) of this response, and of reading every file it names whole.",
    "properties": {"returned": {"type": "integer"}, "files_whole": {"type": "integer"}},
    "required": ["returned", "files_whole"],
}
FRESHNESS_REPORT = {
    "type": "object",
    "description": "What bringing the index up to date took before answering.",
    "properties": {
        "check_ms": {"type": "number"},
        "reindexed_files": {"type": "integer"},
        "stale": {"type": ["string", "null"], "description": "Why changes may be missing from this answer, else null."},
        "warnings": {"type": "array", "items": {"type": "string"},
                     "description": "What else happened on the way (a damaged index rebuilt, a repository left out)."},
    },
    "required": ["check_ms", "reindexed_files", "stale", "warnings"],
}
RESULT = {
    "type": "object",
    "properties": {
        "repo": {"type": "string"},
        "path": {"type": "string", "description": "Relative to the repository root, '/'-separated."},
        "start_line": {"type": "integer", "description": "1-based, inclusive."},
        "end_line": {"type": "integer", "description": "1-based, inclusive."},
        "symbol": {**NULLABLE_STRING, "description": "The definition the span holds, if any."},
        "score": {"type": "number", "description": "The result's score within its repository (higher is better)."},
        "found_by": {
            "type": "object",
            "description": "Modality -> 1-based rank of this result in that modality's list.",
            "additionalProperties": {"type": "integer"},
        },
        "snippet": {"type": "string", "description": f"First lines of the span, within {SNIPPET_TOKENS} tokens."},
    },
    "required": ["repo", "path", "start_line", "end_line", "symbol", "score", "found_by", "snippet"],
}
ANSWER_PROPERTIES = {
    "intent": {"type": "string", "enum": list(INTENTS)},
    "confidence": {"type": "number"},
    "route": {"type": "string", "enum": ["direct", "rrf"], "description": "direct: one modality; rrf: fused."},
    "modalities": {"type": "array", "items": {"type": "string", "enum": list(MODALITIES)}},
    "results": {"type": "array", "items": RESULT},
    "tokens": TOKENS_REPORT,
    "freshness": FRESHNESS_REPORT,
}
DEFINITION = {
    "type": "object",
    "properties": {
        "repo": {"type": "string"},
        "path": {"type": "string"},
        "start_line": {"type": "integer"},
        "end_line": {"type": "integer"},
        "name": {"type": "string"},
        "qualified_name": {"type": "string"},
        "kind": {"type": "string"},
        "signature": {"type": "string"},
        "doc": {"type": "string", "description": "First line of the docstring or doc comment."},
        "dependants": {"type": "integer", "description": "Symbols and files that call or inherit it."},
        "match": {"type": "string", "enum": ["exact", "case-insensitive", "words"]},
    },
    "required": ["repo", "path", "start_line", "end_line", "name", "qualified_name", "kind",
                 "signature", "doc", "dependants", "match"],
}  # fmt: skip
#: How far a dependant's link to the symbol can be trusted (`graph.RESOLUTIONS`).
RESOLVED = {
    "type": "string", "enum": list(RESOLUTIONS),
    "description": "How the least certain edge on its way to the symbol was resolved, most certain first: exact "
                   "(defined in the caller's own file, or the one file an import names), imported (defined in a "
                   "file it imports, or a name it imports), by_name (the only definition of that name in the "
                   "repository), candidate (one of the files an import's module path could name).",
}
DEPENDANT = {
    "type": "object",
    "properties": {
        "repo": {"type": "string"},
        "path": {"type": "string"},
        "line": {"type": "integer", "description": "Where the call, import or base class is written."},
        "symbol": {**NULLABLE_STRING, "description": "The enclosing definition; null for top-level code."},
        "kind": {"type": "string", "description": "Its kind, or \"file\" for top-level code."},
        "depth": {"type": "integer", "description": "Edges between it and the symbol asked about (1: direct)."},
        "via": {"type": "string", "enum": ["call", "import", "inherit", "use"]},
        "uses": {"type": "string", "description": "What it calls, imports, inherits or passes as a value there."},
        "resolved": RESOLVED,
    },
    "required": ["repo", "path", "line", "symbol", "kind", "depth", "via", "uses", "resolved"],
}


def object_schema(properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


def graph_walk_input(symbol: str, depth_default: int, depth: str) -> dict[str, Any]:
    """The input schema of a walk of the graph from a symbol (callers, impact)."""
    return object_schema(
        {
            "symbol": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS, "description": symbol},
            "depth": {"type": "integer", "minimum": 1, "maximum": MAX_DEPTH, "default": depth_default,
                      "description": depth},
            "repo": REPO_ARGUMENT,
        },
        ["symbol"],
    )




# Arguments -----------------------------------------------------------------------------------

#: Characters of a refused argument quoted in its error: a huge one is cut, not echoed whole.
_SHOWN_CHARS = 40


def validate_arguments(tool: str, schema: dict[str, Any], arguments: dict[str, Any] | None) -> dict[str, Any]:
    """The arguments of a call to `tool`, checked against its input `schema` (by the jsonschema
    package) and with defaults filled in; ToolInputError, one sentence, for the first thing
    wrong. A known argument given as null counts as left out."""
    properties: dict[str, dict[str, Any]] = schema["properties"]
    given = {name: value for name, value in (arguments or {}).items() if value is not None or name not in properties}
    order = {name: i for i, name in enumerate(properties)}
    problems = [
        (_order(error, order), _sentence(tool, properties, schema, given, error))
        for error in _validator(tool, schema).iter_errors(given)
    ]
    # What the schemas do not say: a string that must not be empty is not blank either, and no
    # argument holds a NUL.
    for name, value in given.items():
        if name in properties and isinstance(value, str):
            if properties[name].get("minLength") and value and not value.strip():
                problems.append(((2, order[name], _CHECK_ORDER["minLength"]), f"the {name} is empty"))
            if "\0" in value:
                problems.append(((2, order[name], _CHECK_ORDER["nul"]), f"{name} holds a NUL character"))
    if problems:
        raise ToolInputError(min(problems)[1])
    out: dict[str, Any] = {}
    for name, spec in properties.items():
        if name in given:
            out[name] = int(given[name]) if spec.get("type") == "integer" else given[name]
        elif "default" in spec:
            out[name] = spec["default"]
    return out


#: Each tool's validator, made on its first call (a tool's input schema never changes).
_VALIDATORS: dict[str, Draft202012Validator] = {}


def _validator(tool: str, schema: dict[str, Any]) -> Draft202012Validator:
    validator = _VALIDATORS.get(tool)
    if validator is None:
        validator = _VALIDATORS[tool] = Draft202012Validator(schema)
    return validator


#: Which of several problems of one argument is told: its type first, then its size, then the rest.
_CHECK_ORDER = {"type": 0, "minimum": 1, "maximum": 1, "maxLength": 1, "minLength": 2, "enum": 3, "nul": 4}


def _order(error: ValidationError, order: dict[str, int]) -> tuple[int, int, int]:
    """Unknown arguments first, then missing ones, then the arguments in their schema's order."""
    if error.validator == "additionalProperties":
        return (0, 0, 0)
    if error.validator == "required":
        return (1, 0, 0)
    name = str(error.path[0]) if error.path else ""
    return (2, order.get(name, len(order)), _CHECK_ORDER.get(str(error.validator), len(_CHECK_ORDER)))


def _sentence(
    tool: str, properties: dict[str, Any], schema: dict[str, Any], given: dict[str, Any], error: ValidationError
) -> str:
    """What is wrong, in the words of the tool's caller."""
    if error.validator == "additionalProperties":
        unknown = sorted(set(given) - set(properties))[0]
        return f"unknown argument {unknown!r}; {tool} takes {', '.join(properties)}"
    if error.validator == "required":
        missing = next(name for name in schema["required"] if name not in given)
        return f"{missing} is required"
    name = str(error.path[0])
    value, spec = given[name], properties[name]
    if error.validator == "type":
        return f"{name} must be {'an integer' if spec['type'] == 'integer' else 'a string'}, not {_shown(value)}"
    if error.validator in ("minimum", "maximum"):
        low, high = spec.get("minimum"), spec.get("maximum")
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        return f"{name} must be {bounds}, not {_shown(value)}"
    if error.validator == "maxLength":
        return f"the {name} is {len(value):,} characters; the limit is {spec['maxLength']:,}"
    if error.validator == "minLength":
        return f"the {name} is empty"
    if error.validator == "enum":
        return f"{name} must be one of {', '.join(spec['enum'])}, not {_shown(value)}"
    return f"{name} does not fit its schema: {error.message}"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"
