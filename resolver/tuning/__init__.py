"""The tuning loop (docs/tuning.md): shadow telemetry -> validated proposals -> approved edits.

    shadow    `ShadowSet`, `load_shadow_set`, `recall_report` (``resolver telemetry recall``)
    proposal  `Proposal` (``schemas/proposal.v1.json``), `load_proposal`
    propose   `propose` (``resolver tune propose``): misses -> descriptions, validated by the gate
    apply     `apply_proposal` (``resolver tune apply``): approved entries -> override file

Never imported on the hook path; it uses the benchmark harness (`resolver.bench`).
"""

from ._apply import ApplyResult, apply_proposal
from ._proposal import Proposal, ProposalEntry, load_proposal
from ._propose import ProposeOptions, distinctive_terms, propose
from ._render import proposal_markdown, write_proposal
from ._shadow import ShadowSet, ShadowTurn, load_shadow_set, recall_report, shadow_set

__all__ = [
    "ApplyResult",
    "Proposal",
    "ProposalEntry",
    "ProposeOptions",
    "ShadowSet",
    "ShadowTurn",
    "apply_proposal",
    "distinctive_terms",
    "load_proposal",
    "load_shadow_set",
    "proposal_markdown",
    "propose",
    "recall_report",
    "shadow_set",
    "write_proposal",
]
