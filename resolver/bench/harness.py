"""One benchmark run: build the configuration and the resolver, replay, score, baseline.

The configuration is a resolver config file (``--config``) or the shipped defaults with no
override file (so a user's ``~/.openclaw/resolver-catalog.json`` never leaks into a result).
The learned keyword cache is off unless the config file names one (``keywordCacheFile``):
a result never depends on what this machine's resolver learned.
``--classifier llm`` takes ``llmApiBase``/``llmModel``/``llmApiKey`` from the environment
(``LLM_API_BASE``, ``LLM_MODEL``, ``LLM_API_KEY``) over the file's values; ``offline`` runs the
pipeline with no LLM whatever the environment holds. Without ``--classifier`` the run uses the
LLM when any of those variables is set, and offline otherwise (`choose_classifier`); the
result and its header say which and why.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from .._catalog import CatalogStore
from .._classify import Classifier
from .._config import ResolverConfig, load_config, load_config_file
from .._errors import ConfigError
from .._pipeline import Resolver
from .._redact import safe_url
from .cases import CaseSet
from .metrics import CaseOutcome, by_category, summarize
from .record import RecordingClassifier, ReplayClassifier
from .runner import Progress, replay_cases

ClassifierKind = Literal["offline", "llm"]

LLM_ENV = {"LLM_API_BASE": "llmApiBase", "LLM_MODEL": "llmModel", "LLM_API_KEY": "llmApiKey"}


def base_config(path: str | None) -> ResolverConfig:
    """The config file's configuration, or the defaults without an override file; the keyword
    cache only when the file names one."""
    if path:
        config = load_config_file(path)
        if "keyword_cache_file" not in config.model_fields_set:
            config = config.model_copy(update={"keyword_cache_file": None})
        return config
    return ResolverConfig(catalog_overrides_file=None, keyword_cache_file=None)


def choose_classifier(
    explicit: ClassifierKind | None, env: Mapping[str, str] | None = None
) -> tuple[ClassifierKind, str]:
    """The classifier a run uses and why: ``--classifier`` when given, else the LLM when any
    of LLM_API_BASE, LLM_MODEL, LLM_API_KEY is set, else offline."""
    env = os.environ if env is None else env
    if explicit is not None:
        return explicit, f"--classifier {explicit}"
    named = [var for var in LLM_ENV if env.get(var)]
    if named:
        return "llm", f"{', '.join(named)} set in the environment (--classifier offline to skip)"
    return "offline", "no --classifier and no LLM_* variable set"


def with_llm_env(config: ResolverConfig, env: Mapping[str, str] | None = None) -> ResolverConfig:
    """`config` with llmApiBase/llmModel/llmApiKey taken from LLM_API_BASE/LLM_MODEL/LLM_API_KEY."""
    env = os.environ if env is None else env
    updates = {key: env[var] for var, key in LLM_ENV.items() if env.get(var)}
    if not updates:
        return config
    data = config.model_dump(by_alias=True, exclude_unset=True)
    if config.llm_api_key is not None:
        data["llmApiKey"] = config.llm_api_key.get_secret_value()
    data.update(updates)
    return load_config(data, source="LLM_* environment")


def classifier_line(spec: RunSpec) -> str:
    """One line naming the classifier a run uses (the LLM's model and base) and why."""
    if spec.classifier == "llm":
        source = "recorded decisions in " + spec.replay if spec.replay else "the LLM"
        where = safe_url(spec.config.llm_api_base or "") or "the default OpenAI endpoint"
        what = f"llm ({source}: {spec.config.llm_model} at {where})"
    else:
        what = "offline"
    return f"classifier: {what}" + (
        f" — {spec.classifier_reason}" if spec.classifier_reason else ""
    )


def public_config(config: ResolverConfig) -> dict[str, Any]:
    """The configuration as recorded in a result (the key left out, never written)."""
    data = config.model_dump(by_alias=True, mode="json")
    data.pop("llmApiKey", None)
    if data.get("llmApiBase"):
        data["llmApiBase"] = safe_url(data["llmApiBase"])
    return data


@dataclass
class RunSpec:
    """What to run: cases, configuration, classifier and record/replay folders."""

    cases: CaseSet
    config: ResolverConfig
    classifier: ClassifierKind = "offline"
    config_path: str | None = None
    record: str | None = None
    replay: str | None = None
    concurrency: int = 1
    label: str = "resolver"
    classifier_reason: str = ""
    """Why this classifier (`choose_classifier`), recorded in the result."""
    llm: Classifier | None = field(default=None, repr=False)
    """An injected LLM classifier (tests, voting); default: the one the config selects."""


@dataclass
class RunOutput:
    spec: RunSpec
    resolver: Resolver
    outcomes: list[CaseOutcome]
    elapsed_s: float
    cpu_s: float
    """CPU time of this process during the replay (the machine may be shared)."""
    replayed: ReplayClassifier | None = None


def build_resolver(spec: RunSpec) -> tuple[Resolver, ReplayClassifier | None]:
    """The one resolver of a run, with the classifier the spec asks for."""
    config = spec.config
    if spec.classifier == "offline":
        if spec.record or spec.replay:
            raise ConfigError("--record/--replay apply to --classifier llm only")
        resolver = Resolver(config, llm=None)
        resolver.llm = None  # offline whatever the environment holds
        return resolver, None
    if spec.replay:
        replayed = ReplayClassifier(spec.replay)
        return Resolver(config, llm=replayed), replayed
    resolver = Resolver(config, llm=spec.llm)
    if resolver.llm is None:
        raise ConfigError(
            "--classifier llm: no LLM classifier; set LLM_API_BASE (and LLM_API_KEY, "
            "LLM_MODEL) or llmApiBase/llmApiKey in --config, or use --replay DIR"
        )
    if spec.record:
        key = config.api_key()
        resolver.llm = RecordingClassifier(
            resolver.llm,
            spec.record,
            meta={
                "label": spec.label,
                "llmModel": config.llm_model,
                "llmApiBase": safe_url(config.llm_api_base or ""),
                "caseFile": spec.cases.file.name,
                "caseFileSha256": spec.cases.sha256,
            },
            secrets=(key,) if key else (),
        )
    return resolver, None


async def run(spec: RunSpec, progress: Progress | None = None) -> RunOutput:
    """Replay the spec's cases through one resolver."""
    resolver, replayed = build_resolver(spec)
    start, cpu = time.perf_counter(), time.process_time()
    outcomes = await replay_cases(
        resolver, spec.cases, concurrency=spec.concurrency, progress=progress
    )
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    if replayed is not None:
        replayed.check()
    return RunOutput(spec, resolver, outcomes, elapsed, cpu, replayed)


def effective_descriptions(config: ResolverConfig, cases: CaseSet) -> list[tuple[str, str]]:
    """(name, description) of every candidate as the classifier sees it."""
    catalog = CatalogStore(config).current()
    return [(t.name, catalog.describe(t.name, t.description)) for t in cases.candidates]


def benchmark_script(path: Path) -> ModuleType:
    """A script of ``benchmark/`` as a module, for another script that reuses its functions and
    constants (their file names have hyphens, so they cannot be imported by name)."""
    spec = importlib.util.spec_from_file_location(path.stem.replace("-", "_"), path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def command_line(argv: list[str]) -> str:
    """The command as typed: ``python benchmark/<script>.py ...`` or ``resolver ...``."""
    script = Path(sys.argv[0]) if sys.argv else Path()
    if script.suffix == ".py" and script.parent.name == "benchmark":
        try:
            shown = str(script.resolve().relative_to(Path.cwd()))
        except ValueError:
            shown = str(script)
        return shlex.join(["python", shown, *sys.argv[1:]])
    return shlex.join(["resolver", *argv])


def run_document(out: RunOutput, *, command: str) -> dict[str, Any]:
    """The result JSON of one run (without baselines)."""
    spec = out.spec
    cases = spec.cases
    catalog = out.resolver.catalogs.current()
    config_info: dict[str, Any] = {
        "classifier": spec.classifier,
        "classifierChosenBy": spec.classifier_reason or None,
        "configFile": spec.config_path,
        "catalogFingerprint": catalog.fingerprint,
        "resolverConfig": public_config(spec.config),
    }
    if spec.classifier == "llm":
        config_info["llmModel"] = spec.config.llm_model
        config_info["llmApiBase"] = safe_url(spec.config.llm_api_base or "")
    if spec.record:
        config_info["recordedTo"] = spec.record
    if spec.replay:
        config_info["replayedFrom"] = spec.replay
    return {
        "format": "resolver-bench-result/1",
        "command": command,
        "generatedAt": datetime.now(UTC).isoformat(timespec="seconds"),
        "caseFile": {
            "path": cases.path,
            "name": cases.file.name,
            "source": cases.file.source,
            "license": cases.file.license,
            "sha256": cases.sha256,
            "cases": len(cases.cases),
            "candidates": len(cases.candidates),
            "surface": "default OpenClaw surface" if cases.default_surface else "file tools",
        },
        "config": config_info,
        "elapsed_s": round(out.elapsed_s, 3),
        "cpu_s": round(out.cpu_s, 3),
        "load_average_1m": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        "metrics": summarize(out.outcomes),
        "by_category": by_category(out.outcomes),
        "failures": [o.row() for o in out.outcomes if not o.score.hit],
    }
