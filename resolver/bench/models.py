"""Several models/endpoints on the same cases -> one comparison table (``model-benchmark``).

A models file lists the configurations to compare::

    {"models": [
      {"label": "mini-t0", "llmModel": "gpt-5.4-mini", "llmApiBase": "https://…/v1",
       "apiKeyEnv": "LLM_API_KEY"},
      {"label": "mini-voted5", "llmModel": "gpt-5.4-mini", "votes": 5, "temperature": 0.7}
    ]}

``votes`` 1 (the default) is the deterministic configuration (`LLMClassifier`: T=0, one
sample). ``votes`` n > 1 is a voted configuration: the pipeline's own `VotedClassifier`
(n samples at ``temperature``, combined by its recall-friendly rule). Keys are read from the
environment variable named by ``apiKeyEnv`` (never from the file). With ``--record DIR`` /
``--replay DIR`` each model records into / replays from ``DIR/<label>``.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._classify import Classifier
from .._config import ResolverConfig, load_config
from .._errors import ConfigError
from .cases import load_case_file
from .harness import RunOutput, RunSpec, base_config, command_line
from .metrics import summarize
from .report import md_table


class ModelEntry(BaseModel):
    """One configuration to compare."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    label: str = Field(min_length=1)
    llm_model: str = Field(alias="llmModel")
    llm_api_base: str | None = Field(default=None, alias="llmApiBase")
    api_key_env: str | None = Field(default=None, alias="apiKeyEnv")
    votes: int = Field(default=1, ge=1, le=15)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)


class ModelsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    models: list[ModelEntry] = Field(min_length=1)


def load_models(path: str) -> ModelsFile:
    try:
        return ModelsFile.model_validate(orjson.loads(Path(path).read_bytes()))
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot read models file ({exc.strerror})", source=path
        ) from None
    except (orjson.JSONDecodeError, ValidationError) as exc:
        raise ConfigError(f"{path}: invalid models file: {exc}", source=path) from None


def slug(label: str) -> str:
    """A folder name for a label."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-") or "model"


LLMFactory = Callable[[ResolverConfig, "ModelEntry"], Classifier]


def default_llm_factory(config: ResolverConfig, entry: ModelEntry) -> Classifier:
    """`LLMClassifier` (T=0, one sample) or, for ``votes`` > 1, the voted classifier."""
    from .._llm import LLMClassifier, VotedClassifier

    if entry.votes > 1:
        return VotedClassifier(config, n=entry.votes, temperature=entry.temperature)
    return LLMClassifier(config)


def entry_config(base: ResolverConfig, entry: ModelEntry) -> ResolverConfig:
    data = base.model_dump(by_alias=True, exclude_unset=True)
    data["llmModel"] = entry.llm_model
    if entry.llm_api_base:
        data["llmApiBase"] = entry.llm_api_base
    if entry.api_key_env:
        key = os.environ.get(entry.api_key_env)
        if key:
            data["llmApiKey"] = key
    return load_config(data, source=f"models entry {entry.label!r}")


def compare_models(
    args: argparse.Namespace,
    execute: Callable[[RunSpec, argparse.Namespace], RunOutput],
    *,
    llm_factory: LLMFactory | None = None,
) -> tuple[dict[str, Any], str]:
    """Run every model on the same cases; the result document and its markdown table."""
    models = load_models(args.models)
    cases = load_case_file(args.file).limited(args.limit)
    base = base_config(getattr(args, "config", None))
    rows: list[list[str]] = []
    results: list[dict[str, Any]] = []
    for entry in models.models:
        config = entry_config(base, entry)
        factory = llm_factory or default_llm_factory
        llm = None if args.replay else factory(config, entry)
        spec = RunSpec(
            cases=cases,
            config=config,
            classifier="llm",
            config_path=getattr(args, "config", None),
            record=str(Path(args.record) / slug(entry.label)) if args.record else None,
            replay=str(Path(args.replay) / slug(entry.label)) if args.replay else None,
            concurrency=args.concurrency,
            label=entry.label,
            llm=llm,
        )
        out = execute(spec, args)
        m = summarize(out.outcomes)
        acc, rec = m["must_include_accuracy"], m["avg_recall"]
        results.append(
            {
                "label": entry.label,
                "entry": entry.model_dump(by_alias=True),
                "metrics": m,
            }
        )
        rows.append(
            [
                entry.label,
                entry.llm_model,
                "deterministic" if entry.votes == 1 else f"voted x{entry.votes}",
                f"{acc['value']:.3f}",
                f"[{acc['ci95'][0]:.3f}, {acc['ci95'][1]:.3f}]",
                f"{rec['value']:.3f}",
                f"[{rec['ci95'][0]:.3f}, {rec['ci95'][1]:.3f}]",
                f"{m['exact_match']['value']:.3f}",
                f"{m['mean_surface']:.2f}",
                f"{m.get('llm_p50_ms', m['p50_ms']):.0f}",
                str(m["errors"]),
            ]
        )
    command = command_line(getattr(args, "argv", []))
    doc = {
        "format": "resolver-bench-models/1",
        "command": command,
        "caseFile": {"path": cases.path, "sha256": cases.sha256, "cases": len(cases.cases)},
        "models": results,
    }
    table = md_table(
        [
            "label",
            "model",
            "config",
            "accuracy",
            "95% CI",
            "avg recall",
            "95% CI",
            "exact",
            "surface",
            "p50 ms",
            "errors",
        ],
        rows,
    )
    markdown = "\n".join(
        [
            f"# Model comparison: {cases.file.name}",
            "",
            f"Command: `{command}`",
            "",
            f"{len(cases.cases)} cases, case file sha256 `{cases.sha256[:16]}…`. p50 is the "
            "classifier request's latency when an LLM answered (else the turn's).",
            "",
            table,
            "",
        ]
    )
    return doc, markdown
