"""The readable markdown beside a proposal, and writing both files."""

from __future__ import annotations

from pathlib import Path

from .._cache import atomic_write
from ._proposal import Proposal


def proposal_markdown(proposal: Proposal, json_name: str) -> str:
    lines = [
        f"# Tuning proposal {proposal.proposal_id}",
        "",
        f"Created {proposal.created} from {len(proposal.telemetry)} telemetry file(s) "
        f"(sha256 `{proposal.telemetry_sha256[:16]}…`): {proposal.shadow_turns} measured shadow "
        f"turns, {proposal.shadow_misses} with a miss. Catalog validated against: "
        f"`{proposal.catalog_fingerprint}`. Nothing has been changed: approve entries with",
        "",
        "```",
        f"resolver tune apply {json_name} --approve ID[,ID...] --dry-run   # show the diff",
        f"resolver tune apply {json_name} --approve ID[,ID...]             # write it",
        "```",
        "",
    ]
    if not proposal.entries:
        lines += ["No entry: no tool was missed on enough shadow turns.", ""]
    else:
        lines += ["| id | tool | misses / used | gate | failure-set hits |"]
        lines += ["|---|---|---|---|---|"]
        for e in proposal.entries:
            fig = e.gate.failure_set
            lines.append(
                f"| {e.id} | `{e.tool}` | {e.evidence.misses} / {e.evidence.used} | "
                f"{'pass' if e.gate.passed else '**FAIL**'} | "
                f"{fig.control_hits} → {fig.treatment_hits} of {fig.cases} |"
            )
        lines.append("")
    for e in proposal.entries:
        lines += [
            f"## {e.id}: `{e.tool}` — gate {'passed' if e.gate.passed else 'FAILED'}",
            "",
            f"Current ({e.current_origin}): {e.current or '(none)'}",
            "",
            f"Proposed: {e.proposed}",
            "",
            f"Added terms: {', '.join(e.evidence.added_terms)}. Missed on {e.evidence.misses} "
            f"of the {e.evidence.used} shadow turns that used it, e.g.:",
            "",
            *[f"- “{x}”" for x in e.evidence.examples],
            "",
            f"Validation ({e.gate.classifier} classifier; margins `{e.gate.margins_path}`, "
            f"sha256 `{e.gate.margins_sha256[:16]}…`; regression cases: "
            f"{'; '.join(e.gate.regression_sources) or 'none'}):",
            "",
            *[f"- {c}" for c in e.gate.checks],
            "",
        ]
        if not e.gate.passed:
            lines += ["This entry cannot be applied without `--force`.", ""]
    if proposal.findings:
        lines += ["## Findings (reported, no change proposed)", ""]
        for f in proposal.findings:
            lines.append(f"- **{f.kind}** `{f.subject}` ({f.count}): {f.detail}")
            lines += [f"  - “{x}”" for x in f.examples]
        lines.append("")
    return "\n".join(lines)


def write_proposal(proposal: Proposal, out_dir: Path, date: str) -> tuple[Path, Path]:
    """Write ``DIR/<date>-tuning.json`` and the ``.md`` beside it (never the override file)."""
    json_path = out_dir / f"{date}-tuning.json"
    md_path = json_path.with_suffix(".md")
    atomic_write(json_path, proposal.dumps())
    atomic_write(md_path, proposal_markdown(proposal, json_path.name).encode())
    return json_path, md_path
