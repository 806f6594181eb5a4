"""`resolver tune propose`: systemic misses in shadow telemetry -> validated description changes.

1. **Misses**: in shadow turns (`_shadow`), a tool the primary model called that the resolver
   would have left out. Tools missed on at least ``min_support`` turns get an entry; rarer
   misses are reported as findings, as are fallbacks by cause and low-confidence clusters.
2. **Proposed description**: the current effective description plus the distinctive user terms
   of the tool's missed prompts — words in at least ``min_support`` of them, absent from the
   description and the tool's name, and at least `MIN_DISTINCTIVENESS` more frequent there
   than in the other shadow prompts. Deterministic: no LLM.
3. **Validation, before anything is proposed**: control = the catalog in force, treatment = the
   same with this one override. Both replay
   - the *failure set*: every missed shadow turn (prompt, must_include = its used tools), and
   - the *regression set*: the curated cases (on the production surface: host tools the case
     file lacks are added as candidates) plus the shadow turns that were hits;
   through the real pipeline (`resolver.bench.harness.run`). The entry passes only when the
   gate (`resolver.bench.gate.compare`, frozen margins) finds the treatment non-inferior on the
   regression set AND the failure set has more hits with an average recall not lower.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from .._catalog import CatalogStore, EffectiveCatalog, load_catalog_file
from .._config import ResolverConfig, load_config
from .._errors import CatalogError, ConfigError
from .._text import STOPWORDS, tokens
from .._types import ToolInfo
from ..bench.cases import CaseSet, load_case_file, parse_case_file
from ..bench.gate import compare, load_margins
from ..bench.harness import ClassifierKind, RunSpec, run
from ..bench.metrics import CaseOutcome
from ._proposal import (
    Evidence,
    Finding,
    GateResult,
    Proposal,
    ProposalEntry,
    SetFigures,
    TelemetrySource,
)
from ._shadow import EXAMPLES_PER_TOOL, ShadowSet, ShadowTurn, excerpt

MIN_DISTINCTIVENESS = 0.4
"""A term's share of the missed prompts minus its share of the other shadow prompts."""
MAX_TERMS = 8
_WORD = re.compile(r"[^\W\d_][\w'-]*[^\W_]|[^\W\d_]{3,}")


@dataclass(frozen=True)
class ProposeOptions:
    telemetry: tuple[Path, ...]
    cases: Path | None
    """The curated regression case file (None: production hits only)."""
    margins: Path
    surface: tuple[ToolInfo, ...]
    """The candidate surface of the shadow turns (the host's tools)."""
    min_support: int = 2
    classifier: ClassifierKind = "offline"
    now: datetime | None = None


def _words(prompt: str) -> dict[str, str]:
    """stem -> first surface form, for the content words of a prompt."""
    found: dict[str, str] = {}
    for match in _WORD.finditer(prompt.lower()):
        word = match.group(0).strip("'-")
        if len(word) < 3 or word in STOPWORDS:
            continue
        stems = tokens(word)
        if len(stems) == 1:
            found.setdefault(stems[0], word)
    return found


def distinctive_terms(
    tool: str,
    description: str,
    missed: Sequence[str],
    others: Sequence[str],
    *,
    min_support: int,
) -> list[str]:
    """User terms that point at `tool` in its missed prompts and that its text lacks."""
    known = set(tokens(description)) | set(tokens(tool))
    miss_df: Counter[str] = Counter()
    forms: dict[str, Counter[str]] = {}
    for prompt in missed:
        for stem, word in _words(prompt).items():
            miss_df[stem] += 1
            forms.setdefault(stem, Counter())[word] += 1
    other_df: Counter[str] = Counter()
    for prompt in others:
        other_df.update(_words(prompt).keys())
    scored = []
    for stem, df in miss_df.items():
        if stem in known or df < min_support:
            continue
        share = df / len(missed) - (other_df[stem] / len(others) if others else 0.0)
        if share >= MIN_DISTINCTIVENESS:
            word = sorted(forms[stem].items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
            scored.append((-share, -df, word))
    return [word for _, _, word in sorted(scored)[:MAX_TERMS]]


def proposed_description(current: str, tool: str, terms: Sequence[str]) -> str:
    base = current.strip() or f"The {tool} tool."
    if not base.endswith((".", "!", "?")):
        base += "."
    return f"{base} Users also ask for it with: {', '.join(terms)}."


def _sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})", source=str(path)) from None


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def _case_set(
    name: str, turns: Sequence[ShadowTurn], surface: Sequence[ToolInfo], prefix: str
) -> CaseSet | None:
    """Cases from shadow turns (prompt, must_include = used tools); None when there are none."""
    tools = {t.name: t.description for t in surface}
    cases: list[dict[str, Any]] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for turn in turns:
        if not turn.prompt:
            continue
        key = (" ".join(turn.prompt.lower().split()), tuple(sorted(turn.used)))
        if key in seen:
            continue
        seen.add(key)
        for tool in turn.used:
            tools.setdefault(tool, "")
        cases.append(
            {
                "id": f"{prefix}-{_hash(key[0] + '|' + ','.join(key[1]))}",
                "prompt": turn.prompt,
                "must_include": list(turn.used),
                "category": prefix,
                "cluster": f"s-{_hash(turn.session)}" if turn.session else prefix,
            }
        )
    if not cases:
        return None
    doc = {
        "name": name,
        "source": "shadow telemetry",
        "license": "private (generated from local telemetry)",
        "tools": [{"name": n, "description": d} for n, d in tools.items()],
        "cases": cases,
    }
    return parse_case_file(orjson.dumps(doc), path=f"<{name}>")


def _on_surface(cases: CaseSet, surface: Sequence[ToolInfo]) -> CaseSet:
    """The curated cases against the production surface too: host tools the case file lacks
    are added as candidates, so a proposed description can compete on the curated prompts."""
    known = {t.name for t in cases.candidates}
    extra = tuple(t for t in surface if t.name not in known)
    if not extra:
        return cases
    return CaseSet(cases.path, cases.sha256, cases.file, cases.candidates + extra, False)


def _arm_config(config: ResolverConfig, overrides_file: str | None) -> ResolverConfig:
    """`config` for a replay: no shadow sampling, no telemetry, the given override file."""
    data = config.model_dump(by_alias=True, exclude_unset=True)
    if config.llm_api_key is not None:
        data["llmApiKey"] = config.llm_api_key.get_secret_value()
    data.update(shadowSampleRate=0.0, telemetryFile=None, catalogOverridesFile=overrides_file)
    return load_config(data, source="tune propose")


def _figures(outcomes: Sequence[CaseOutcome], treated: Sequence[CaseOutcome]) -> SetFigures:
    n = len(outcomes)
    return SetFigures(
        cases=n,
        control_hits=sum(o.score.hit for o in outcomes),
        treatment_hits=sum(o.score.hit for o in treated),
        control_recall=round(sum(o.score.recall for o in outcomes) / n, 4) if n else 0.0,
        treatment_recall=round(sum(o.score.recall for o in treated) / n, 4) if n else 0.0,
    )


async def _replay(
    config: ResolverConfig, sets: Sequence[CaseSet | None], classifier: ClassifierKind
) -> list[list[CaseOutcome]]:
    results: list[list[CaseOutcome]] = []
    for cases in sets:
        if cases is None:
            results.append([])
            continue
        out = await run(RunSpec(cases=cases, config=config, classifier=classifier, label="tune"))
        results.append(out.outcomes)
    return results


def _override_layer(config: ResolverConfig) -> dict[str, Any]:
    """The override file's content (a valid catalog), or a new empty layer."""
    path = config.overrides_path()
    if path is None or not path.exists():
        return {"schemaVersion": 1, "tools": {}}
    try:
        load_catalog_file(path)
    except CatalogError as exc:
        raise ConfigError(
            f"{exc}; fix the override file before proposing changes to it", source=str(path)
        ) from None
    data: dict[str, Any] = orjson.loads(path.read_bytes())
    return data


def _findings(shadow: ShadowSet, rare: dict[str, list[ShadowTurn]]) -> list[Finding]:
    found: list[Finding] = []
    for tool, turns in sorted(rare.items()):
        found.append(
            Finding(
                kind="rare_miss",
                subject=tool,
                count=len(turns),
                detail="missed on fewer shadow turns than --min-support; no change proposed",
                examples=[excerpt(t.prompt) for t in turns[:EXAMPLES_PER_TOOL]],
            )
        )
    for code, count in sorted(shadow.fallbacks.items(), key=lambda kv: (-kv[1], kv[0])):
        found.append(
            Finding(
                kind="fallback",
                subject=code,
                count=count,
                detail=f"{count} of {shadow.lines} turns fell back ({code})",
            )
        )
    return found


def low_confidence_clusters(events: Sequence[Any]) -> list[Finding]:
    """Low-confidence full-surface turns grouped by their best-ranked candidate."""
    groups: dict[str, list[Any]] = {}
    for event in events:
        if "low_confidence_full_surface" in event.reason_codes:
            top = event.top_scores[0].name if event.top_scores else "(no candidate)"
            groups.setdefault(top, []).append(event)
    return [
        Finding(
            kind="low_confidence_cluster",
            subject=top,
            count=len(items),
            detail=f"{len(items)} low-confidence turns whose best-ranked candidate was {top}",
            examples=[excerpt(e.prompt_excerpt) for e in items[:EXAMPLES_PER_TOOL]],
        )
        for top, items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        if len(items) >= 2
    ]


async def propose(
    config: ResolverConfig, shadow: ShadowSet, options: ProposeOptions, events: Sequence[Any]
) -> Proposal:
    """Build and validate the proposal (writes nothing; see `write_proposal`)."""
    now = options.now or datetime.now(UTC)
    catalog: EffectiveCatalog = CatalogStore(config).current()
    host = {t.name: t.description for t in options.surface}
    margins, margins_sha = load_margins(options.margins)

    missed: dict[str, list[ShadowTurn]] = {}
    for turn in shadow.turns:
        for tool in turn.missing:
            missed.setdefault(tool, []).append(turn)
    miss_turns = [t for t in shadow.turns if not t.hit]
    hit_turns = [t for t in shadow.turns if t.hit]
    failure = _case_set("failure-set", miss_turns, options.surface, "failure")
    production = _case_set("production-hits", hit_turns, options.surface, "production-hit")
    curated = _on_surface(load_case_file(options.cases), options.surface) if options.cases else None
    sources = []
    if curated is not None:
        sources.append(f"{options.cases} (sha256 {curated.sha256[:16]}…, {len(curated.cases)})")
    if production is not None:
        sources.append(f"production hits ({len(production.cases)} shadow turns)")

    base_layer = _override_layer(config)
    control_cfg = _arm_config(config, config.catalog_overrides_file)
    sets = [failure, curated, production]
    control: list[list[CaseOutcome]] | None = None  # replayed once, when first needed

    entries: list[ProposalEntry] = []
    rare: dict[str, list[ShadowTurn]] = {}
    unfixable: list[Finding] = []
    used_counts = Counter(t for turn in shadow.turns for t in turn.used)
    ranked = sorted(missed.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    for tool, turns in ranked:
        if len(turns) < options.min_support:
            rare[tool] = turns
            continue
        current = catalog.describe(tool, host.get(tool, ""))
        origin = catalog.origins.get(tool, "host" if host.get(tool) else "none")
        prompts = [t.prompt for t in turns if t.prompt]
        others = [t.prompt for t in shadow.turns if t.prompt and tool not in t.used]
        terms = distinctive_terms(tool, current, prompts, others, min_support=options.min_support)
        if not terms:
            unfixable.append(
                Finding(
                    kind="unfixable_miss",
                    subject=tool,
                    count=len(turns),
                    detail="missed, but its missed prompts share no distinctive term "
                    "(or no prompt was captured); review by hand",
                    examples=[excerpt(p) for p in prompts[:EXAMPLES_PER_TOOL]],
                )
            )
            continue
        proposed = proposed_description(current, tool, terms)
        if control is None:
            control = await _replay(control_cfg, sets, options.classifier)
        layer = {**base_layer, "tools": {**base_layer.get("tools", {}), tool: proposed}}
        with tempfile.TemporaryDirectory(prefix="resolver-tune-") as tmp:
            path = Path(tmp) / "treatment-catalog.json"
            path.write_bytes(orjson.dumps(layer))
            treated = await _replay(_arm_config(config, str(path)), sets, options.classifier)
        fail_fig = _figures(control[0], treated[0])
        reg_control, reg_treated = control[1] + control[2], treated[1] + treated[2]
        reg_fig = _figures(reg_control, reg_treated)
        checks: list[str] = []
        if reg_control:
            verdict = compare(reg_control, reg_treated, margins)
            checks.extend(f"regression set: {c}" for c in verdict["checks"])
            reg_ok = bool(verdict["pass"])
        else:
            verdict = {"pass": True, "note": "no regression cases"}
            checks.append("regression set: empty (pass --cases to check for regressions)")
            reg_ok = True
        improved = fail_fig.treatment_hits > fail_fig.control_hits
        kept = fail_fig.treatment_recall >= fail_fig.control_recall
        checks.append(
            f"failure set: hits {fail_fig.control_hits} -> {fail_fig.treatment_hits} of "
            f"{fail_fig.cases} -> {'improved' if improved else 'not improved'}"
        )
        checks.append(
            f"failure set: average recall {fail_fig.control_recall:.4f} -> "
            f"{fail_fig.treatment_recall:.4f} -> {'not lower' if kept else 'LOWER'}"
        )
        entries.append(
            ProposalEntry(
                id=f"e{len(entries) + 1}",
                tool=tool,
                current=current,
                current_origin=origin,
                proposed=proposed,
                evidence=Evidence(
                    shadow_turns=len(shadow.turns),
                    used=used_counts[tool],
                    misses=len(turns),
                    examples=[excerpt(p) for p in prompts[:EXAMPLES_PER_TOOL]],
                    added_terms=terms,
                ),
                gate=GateResult(
                    passed=reg_ok and improved and kept,
                    checks=checks,
                    classifier=options.classifier,
                    failure_set=fail_fig,
                    regression_set=reg_fig,
                    regression_gate=verdict,
                    margins_path=str(options.margins),
                    margins_sha256=margins_sha,
                    regression_sources=sources,
                ),
            )
        )

    telemetry = [TelemetrySource(path=str(p), sha256=_sha256(p)) for p in options.telemetry]
    combined = hashlib.sha256("".join(t.sha256 for t in telemetry).encode()).hexdigest()
    findings = [*unfixable, *_findings(shadow, rare), *low_confidence_clusters(events)]
    return Proposal(
        **{"$schema": "https://openclaw-tool-resolver/schemas/proposal.v1.json"},
        proposal_id=f"tune-{now:%Y%m%d-%H%M%S}-{combined[:8]}",
        created=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        telemetry=telemetry,
        telemetry_sha256=combined,
        catalog_fingerprint=catalog.fingerprint,
        override_file=config.catalog_overrides_file,
        shadow_turns=len(shadow.turns),
        shadow_misses=len(miss_turns),
        min_support=options.min_support,
        entries=entries,
        findings=findings,
    )
