"""Hostile and oversized input (issue #14), tried for real: every family of
`resolver.bench.adversarial` holds — a defined answer within the deadline plus grace, nothing
learned lost, no secret written, echoed or logged."""

from __future__ import annotations

import pytest

from resolver.bench.adversarial import FAMILIES, Context, secret_bytes, table


@pytest.mark.parametrize("family", list(FAMILIES))
def test_every_case_of_the_family_holds(family: str, tmp_path: object) -> None:
    """Each case of the family passes (the failures, if any, are listed with their detail).
    At the longest deadline a config allows: the outcome is what is tested here (on a loaded
    2-core machine a 5 s turn ran out of time); `benchmark/adversarial.py` measures the
    latency at the default deadline."""
    from pathlib import Path

    trials = FAMILIES[family](Context(Path(str(tmp_path)), deadline_ms=14_000))
    assert trials, "the family ran no case"
    failed = [f"{t.case}: {t.detail}" for t in trials if not t.passed]
    assert not failed, "\n".join(failed)
    assert sum(t.secret_bytes for t in trials) == 0
    row = table(trials)[0]
    assert row["failed"] == 0 and row["cases"] == len(trials)


def test_secret_bytes_counts_shared_runs_case_insensitively() -> None:
    """The leak metric: characters of the secret inside a shared run of 6+ characters."""
    secret = "ghp_AbCdEf123456"
    assert secret_bytes(secret, ["nothing here"]) == 0
    assert secret_bytes(secret, ["token abcdef1234 in a cache"]) == len("AbCdEf1234")
    assert secret_bytes(secret, [b"prefix GHP_ABCDEF123456 suffix"]) == len(secret)
    assert secret_bytes(secret, ["ghp_Ab"]) == 6
