"""JSON Schemas generated from the pydantic models (``schemas/*.json``).

`generate()` is the single source; ``resolver schemas --write`` regenerates the files and a
test fails when the committed files drift from the models.
"""

from __future__ import annotations

import importlib
from typing import Any

from pydantic import BaseModel

SCHEMA_MODELS: dict[str, tuple[str, str, str]] = {
    # file name -> (module, model, title)
    "catalog.v1.json": ("resolver._catalog", "CatalogFile", "Resolver description catalog v1"),
    "keyword-cache.v1.json": ("resolver._cache", "CacheFile", "Resolver keyword cache file v1"),
    "proposal.v1.json": (
        "resolver.tuning._proposal",
        "Proposal",
        "Resolver tuning proposal v1 (resolver tune propose / apply)",
    ),
    "telemetry-event.v1.json": (
        "resolver.telemetry._event",
        "TelemetryEvent",
        "Resolver telemetry event v1 (one JSONL line per turn)",
    ),
    "benchmark-case.v1.json": (
        "resolver.bench.cases",
        "CaseFile",
        "Resolver benchmark case file v1",
    ),
}


def generate() -> dict[str, dict[str, Any]]:
    """Every schema, keyed by file name."""
    out: dict[str, dict[str, Any]] = {}
    for filename, (module_name, model_name, title) in SCHEMA_MODELS.items():
        model: type[BaseModel] = getattr(importlib.import_module(module_name), model_name)
        schema = model.model_json_schema(by_alias=True, mode="validation")
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["$id"] = f"https://openclaw-tool-resolver/schemas/{filename}"
        schema["title"] = title
        out[filename] = schema
    return out
