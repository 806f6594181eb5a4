"""Per-turn tool-surface resolver for LLM agents.

Importing this package does no I/O, reads no environment and configures no logging; the
library logs only to ``logging.getLogger("resolver")``.
"""

from ._cache import KeywordCache
from ._catalog import CatalogFile, CatalogStore, EffectiveCatalog, load_catalog_file
from ._classify import Classification, Classifier, ClassifyInput
from ._config import DEFAULT_CORE_TOOLS, ResolverConfig, load_config, load_config_file
from ._errors import (
    CatalogError,
    ClassifierError,
    ClassifierHTTPError,
    ClassifierOutputError,
    ClassifierTimeout,
    ConfigError,
    InvariantError,
    ResolverError,
)
from ._explain import TopKMode, explain_data, top_k
from ._offline import OfflineClassifier
from ._pipeline import Resolver, as_dict, settle_heap
from ._reuse import ReuseStore
from ._state import state_from_openclaw_ctx
from ._types import (
    REASON_CODES,
    Candidate,
    Exclusion,
    Message,
    ReasonCode,
    Resolution,
    Signal,
    Source,
    Timings,
    ToolInfo,
    TurnRequest,
    Usage,
)
from .hosts.python import before_prompt_build, resolve

__all__ = [
    "DEFAULT_CORE_TOOLS",
    "REASON_CODES",
    "Candidate",
    "CatalogError",
    "CatalogFile",
    "CatalogStore",
    "Classification",
    "Classifier",
    "ClassifierError",
    "ClassifierHTTPError",
    "ClassifierOutputError",
    "ClassifierTimeout",
    "ClassifyInput",
    "ConfigError",
    "EffectiveCatalog",
    "Exclusion",
    "InvariantError",
    "KeywordCache",
    "Message",
    "OfflineClassifier",
    "ReasonCode",
    "Resolution",
    "Resolver",
    "ResolverConfig",
    "ResolverError",
    "ReuseStore",
    "Signal",
    "Source",
    "Timings",
    "ToolInfo",
    "TopKMode",
    "TurnRequest",
    "Usage",
    "as_dict",
    "before_prompt_build",
    "explain_data",
    "load_catalog_file",
    "load_config",
    "load_config_file",
    "resolve",
    "settle_heap",
    "state_from_openclaw_ctx",
    "top_k",
]
