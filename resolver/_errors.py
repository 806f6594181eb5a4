"""The resolver's exceptions.

    ResolverError
    ├── ConfigError            an invalid configuration value or file (CLI: exit 2)
    ├── CatalogError           an invalid catalog layer (file, location, fix)
    ├── ClassifierError        the classifier could not give a usable answer
    │   ├── ClassifierTimeout  the deadline passed
    │   ├── ClassifierHTTPError the endpoint answered with an error status
    │   └── ClassifierOutputError the answer did not fit the contract
    └── InvariantError         a stage broke an invariant (a bug; mapped to abstain)

Exactly one broad ``except`` maps these (and anything else) to a reason code and a
fail-open answer: ``Resolver.resolve`` in ``_pipeline.py``.
"""

from __future__ import annotations


class ResolverError(Exception):
    """Base of every error the resolver raises on purpose."""


class ConfigError(ResolverError):
    """An invalid configuration; the message names the key and what is allowed."""

    def __init__(self, message: str, *, source: str = "config") -> None:
        super().__init__(message)
        self.source = source


class CatalogError(ResolverError):
    """An invalid catalog layer; the message names the file, the location and the fix."""

    def __init__(self, message: str, *, path: str | None = None, location: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.location = location


class ClassifierError(ResolverError):
    """The classifier failed; `reason` is the reason code the pipeline records."""

    reason: str = "llm_error_fallback"

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        if reason is not None:
            self.reason = reason


class ClassifierTimeout(ClassifierError):
    """The classifier did not answer before the deadline."""

    reason = "llm_timeout_fallback"

    def __init__(self, message: str, *, timeout_seconds: float) -> None:
        super().__init__(message)
        self.timeout_seconds = timeout_seconds


class ClassifierHTTPError(ClassifierError):
    """The endpoint answered with an error status."""

    def __init__(self, message: str, *, status_code: int | None, reason: str | None = None) -> None:
        super().__init__(message, reason=reason)
        self.status_code = status_code


class ClassifierOutputError(ClassifierError):
    """The classifier's answer did not fit the contract (schema, finish reason, refusal)."""

    reason = "llm_invalid_output_fallback"


class InvariantError(ResolverError):
    """A stage produced a surface that breaks an invariant (a bug)."""
