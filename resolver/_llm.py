"""The LLM classifier: any OpenAI-compatible chat-completions endpoint (DESIGN §4.2).

One request per turn (temperature 0): the prompt from `_llm_prompt`, a strict JSON-schema
answer ``{"tools", "confidence", "reasoning"}``, attribution on every request (``user``,
the ``x-openclaw-caller`` header, ``metadata.tags``). Every fault raises a `ClassifierError`
whose ``reason`` is the reason code the pipeline records; the pipeline then falls back to the
offline classifier inside the deadline (``Resolver._classify``).

Output modes, tried in order and remembered per endpoint (api base + model) once one works:
``json_schema`` (structured output) -> ``json_object`` (JSON mode) -> ``text`` (no
``response_format``). A 400/422 answer moves to the next mode. Whatever the mode, the
content is parsed leniently (code fences and text around the JSON object are tolerated).

Decisions on odd answers: invented names are dropped and the rest kept (but an answer made
only of invented names is invalid); duplicates collapse; non-string items, a confidence
outside 0..1 (rejected, not clamped: the model did not follow the contract) and oversized
answers (more than `llmMaxTokens` completion tokens, `MAX_CONTENT_CHARS_PER_TOKEN` characters
per allowed token, or `MAX_RESPONSE_BYTES` of body) are invalid output.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib
import logging
import math
import re
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

import openai
import orjson
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    StrictStr,
    ValidationError,
    field_validator,
)

from ._classify import Classification, ClassifyInput
from ._config import ResolverConfig
from ._errors import ClassifierError, ClassifierHTTPError, ClassifierOutputError, ClassifierTimeout
from ._llm_prompt import (
    REASONING_CHARS,
    answer_token_budget,
    build_messages,
    response_format_json_schema,
)
from ._redact import HIGH_ENTROPY, redact, safe_url, without_secret_like
from ._types import Usage

logger = logging.getLogger("resolver")

DEFAULT_API_BASE = "https://api.openai.com/v1"
ATTRIBUTION_USER = "openclaw-resolver"
CALLER_HEADER = "x-openclaw-caller"
CALLER_VALUE = "tool-resolver"
MAX_RESPONSE_BYTES = 256 * 1024
"""Largest response body read; a bigger one is an oversized answer (a normal one is ~1 KB)."""
MAX_CONTENT_CHARS_PER_TOKEN = 16
"""The answer text may be at most this many characters per `llmMaxTokens` token."""
NO_KEY_PLACEHOLDER = "unused"
"""Sent as the bearer token when an endpoint is configured without a key (local servers)."""

Mode = Literal["json_schema", "json_object", "text"]
MODES: tuple[Mode, ...] = ("json_schema", "json_object", "text")


# ---------------------------------------------------------------- shared per-process state


def key_fingerprint(key: str | None) -> str:
    """A one-way fingerprint of an API key (never the key): for cache keys and isolation."""
    if not key:
        return "none"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


Droppable = Literal["metadata", "temperature", "max_completion_tokens", "schema_limits"]
DROPPABLE: tuple[Droppable, ...] = (
    "metadata",
    "temperature",
    "max_completion_tokens",
    "schema_limits",
)
"""Request fields left out once an endpoint rejects them by name with a 400: list-valued
``metadata`` (OpenAI's own metadata takes string values only), ``temperature`` (reasoning
models accept only their default), ``max_completion_tokens`` (older servers: sent as
``max_tokens`` instead) and the answer schema's bounds (``maxItems``, ``minimum``/``maximum``,
``maxLength``: a server whose structured output lacks them keeps the enum-constrained schema
without them; the answer is still checked against the bounds here)."""
_DROP_TRIGGERS: dict[Droppable, tuple[str, ...]] = {
    "metadata": ("metadata",),
    "temperature": ("temperature",),
    "max_completion_tokens": ("max_completion_tokens",),
    "schema_limits": ("maxlength", "maxitems", "minimum", "maximum"),
}


@dataclass
class EndpointMemory:
    """What worked against one endpoint (api base + model), remembered for the process."""

    mode: Mode = "json_schema"
    dropped: frozenset[Droppable] = frozenset()
    """Fields this endpoint rejected (see `DROPPABLE`)."""


class ClientPool:
    """One `AsyncOpenAI` client per (api base, key fingerprint) per process.

    A client is bound to the event loop it first ran on (its connection pool is); a call
    from another loop (a second ``asyncio.run``) gets a fresh client for that key.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clients: dict[tuple[str, str], tuple[openai.AsyncOpenAI, Any]] = {}
        self._endpoints: dict[tuple[str, str], EndpointMemory] = {}

    def client(self, api_base: str, api_key: str | None) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        key = (api_base, key_fingerprint(api_key))
        with self._lock:
            entry = self._clients.get(key)
            if entry is not None and entry[1]() is loop:
                return entry[0]
            client = openai.AsyncOpenAI(
                base_url=api_base,
                api_key=api_key or NO_KEY_PLACEHOLDER,
                max_retries=0,
                default_headers={CALLER_HEADER: CALLER_VALUE},
            )
            self._clients[key] = (client, weakref.ref(loop))
            return client

    async def aclose_loop(self) -> None:
        """Close the clients bound to the running loop (call before the loop closes: a
        client collected after its loop is gone would fail to close its connections)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            mine = [k for k, (_, ref) in self._clients.items() if ref() is loop]
            clients = [self._clients.pop(k)[0] for k in mine]
        for client in clients:
            with contextlib.suppress(Exception):
                await client.close()

    def endpoint(self, api_base: str, model: str) -> EndpointMemory:
        with self._lock:
            return self._endpoints.setdefault((api_base, model), EndpointMemory())

    def clear(self) -> None:
        """Forget every client and endpoint memory (tests, key rotation)."""
        with self._lock:
            self._clients.clear()
            self._endpoints.clear()


CLIENTS = ClientPool()
"""The process-wide pool (created empty at import: no I/O until the first request)."""


# ---------------------------------------------------------------- the wire format


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _TokenDetails(_Lenient):
    cached_tokens: int | None = None


class _Usage(_Lenient):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: _TokenDetails | None = None


class _Message(_Lenient):
    content: Any = None
    refusal: str | None = None


class _Choice(_Lenient):
    message: _Message | None = None
    finish_reason: str | None = None


class _Completion(_Lenient):
    choices: list[_Choice] | None = None
    usage: _Usage | None = None
    error: Any = None


class Answer(BaseModel):
    """The classifier's answer (the JSON-schema contract, validated strictly)."""

    model_config = ConfigDict(extra="ignore")

    tools: list[StrictStr] = Field(validation_alias=AliasChoices("tools", "selected_tools"))
    confidence: float = Field(strict=True, ge=0.0, le=1.0)
    reasoning: str = ""

    @field_validator("confidence", mode="before")
    @classmethod
    def _percent(cls, value: Any) -> Any:
        """A confidence above 1 and at most 100 is a percentage (42.5 -> 0.425): grammar-
        constrained servers (llama.cpp) do not enforce a number's ``maximum``. Anything else
        outside 0..1 fails the contract."""
        if isinstance(value, int | float) and not isinstance(value, bool) and 1 < value <= 100:
            return float(value) / 100.0
        return value


_SECRETS = re.compile(r"(\bsk-[A-Za-z0-9_\-*.]{3,}|Bearer\s+\S+)")


def _redact(text: str, key: str | None) -> str:
    """An endpoint's error text as it may be shown: the key, key-like tokens and URL
    passwords removed, cut to 240 characters."""
    if key:
        text = text.replace(key, "[redacted]")
    return redact(_SECRETS.sub("[redacted]", text[:4096]))[:240]


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Errors a response body read can raise (httpx2 for openai>=3, httpx before)."""
    errors: list[type[BaseException]] = [openai.APIError]
    for module in ("httpx2", "httpx"):
        with contextlib.suppress(ImportError, AttributeError):  # depends on the SDK version
            errors.append(importlib.import_module(module).HTTPError)
    return tuple(errors)


_TRANSPORT_ERRORS = _transport_errors()


_FENCE = re.compile(r"```(?:json|JSON)?\s*+(.*?)```", re.DOTALL)
r"""A code fence's inside. The white space after the opening fence is taken whole (``\s*+``):
given back a character at a time, "```" and 6,000 spaces before a last word took 0.2 s, and an
answer may be up to 16 characters per ``llmMaxTokens`` (4,096 allowed: 65,536 characters)."""


def parse_lenient(content: str) -> Any:
    """The JSON object in `content`: whole, inside a code fence, or amid leading/trailing text."""
    text = content.strip()
    fence = _FENCE.search(text)
    start, end = text.find("{"), text.rfind("}")
    attempts = [text]
    if fence:
        attempts.append(fence.group(1).strip())
    if 0 <= start < end:
        attempts.append(text[start : end + 1])
    found: Any = None
    for attempt in attempts:
        try:
            found = orjson.loads(attempt)
        except orjson.JSONDecodeError:
            continue
        if isinstance(found, dict):
            return found  # an object wins over any other JSON value the text also is
    if found is not None:
        return found
    raise ClassifierOutputError("the answer is not JSON")


# ---------------------------------------------------------------- the classifier


class LLMClassifier:
    """Picks the turn's tools with one chat-completions request (the `Classifier` protocol)."""

    def __init__(
        self,
        config: ResolverConfig,
        *,
        temperature: float = 0.0,
        pool: ClientPool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.model = config.llm_model
        self.api_base = (config.llm_api_base or DEFAULT_API_BASE).rstrip("/")
        self.shown_base = safe_url(self.api_base)
        """The endpoint as messages and logs show it (no userinfo, no query string)."""
        self.temperature = temperature
        self.name = f"llm:{self.model}"
        self._pool = pool or CLIENTS
        self._clock = clock

    def _key(self) -> str | None:
        return self.config.api_key()

    async def aclose(self) -> None:
        """Close this process's clients bound to the running loop (`ClientPool.aclose_loop`)."""
        await self._pool.aclose_loop()

    async def prime(self, request: ClassifyInput, *, timeout_s: float = 180.0) -> float:
        """Send the classifier prompt's stable prefix once (a one-token answer, off any turn),
        so a local server's prompt cache holds it before the first turn: a cold 2,500-token
        prefix takes 20-50 s on a small CPU, a cached one well under a second. Returns the
        seconds it took; raises `ClassifierError` like `classify`."""
        start = self._clock()
        client = self._pool.client(self.api_base, self._key())
        messages = build_messages(replace(request, prompt="hello", messages=()))
        body: dict[str, Any] = {"max_tokens": 1, "temperature": 0}
        try:
            async with asyncio.timeout(timeout_s):
                await client.chat.completions.create(
                    model=self.model,
                    messages=messages,  # type: ignore[arg-type]
                    user=ATTRIBUTION_USER,
                    extra_headers={CALLER_HEADER: CALLER_VALUE},
                    extra_body=body,
                    timeout=timeout_s,
                )
        except TimeoutError:
            raise ClassifierTimeout(
                f"priming {self.shown_base} took over {timeout_s:.0f}s", timeout_seconds=timeout_s
            ) from None
        except openai.APIError as exc:
            raise ClassifierHTTPError(
                f"priming {self.shown_base} failed: {_redact(str(exc), self._key())}",
                status_code=getattr(exc, "status_code", None),
            ) from None
        return self._clock() - start

    async def warm_up(self) -> None:
        """Create the shared client now (TLS setup, lazy SDK imports: ~0.1-0.3 s once), so
        the first turn does not spend its deadline on it. Makes no request."""
        client = self._pool.client(self.api_base, self._key())
        _ = client.chat.completions.with_streaming_response

    async def classify(self, request: ClassifyInput) -> Classification:
        """One request within ``request.timeout_s``; raise `ClassifierError` on any fault."""
        start = self._clock()
        budget = max(0.001, request.timeout_s)
        try:
            async with asyncio.timeout(budget):
                completion = await self._complete(request, start + budget)
        except TimeoutError:
            raise ClassifierTimeout(
                f"no answer from {self.shown_base} within {budget:.3f}s", timeout_seconds=budget
            ) from None
        latency_ms = round((self._clock() - start) * 1000.0, 3)
        return self._interpret(completion, request, latency_ms)

    async def _complete(self, request: ClassifyInput, deadline: float) -> _Completion:
        key = self._key()
        client = self._pool.client(self.api_base, key)
        memory = self._pool.endpoint(self.api_base, self.model)
        mode, dropped = memory.mode, memory.dropped
        messages = build_messages(request)
        # the turn as the classifier sees it: no key, token or credential-like word (they do
        # not help pick tools, and the endpoint need not see them)
        messages[-1]["content"] = without_secret_like(
            messages[-1]["content"], (key,) if key else (), marker=HIGH_ENTROPY
        )
        names = [name for name, _ in request.tools]
        while True:
            try:
                raw = await self._post(client, messages, names, mode, dropped, deadline)
            except openai.APIStatusError as exc:
                if exc.status_code in (400, 422):
                    text = str(exc)[:4096].lower()
                    field = next(
                        (
                            f
                            for f in DROPPABLE
                            if f not in dropped
                            and (f != "schema_limits" or mode == "json_schema")
                            and any(word in text for word in _DROP_TRIGGERS[f])
                        ),
                        None,
                    )
                    if field is not None:
                        logger.warning(
                            "resolver: %s rejects %s; sending requests without it",
                            self.shown_base,
                            field,
                        )
                        dropped = dropped | {field}
                        continue
                    if mode != "text":
                        following = MODES[MODES.index(mode) + 1]
                        logger.info(
                            "resolver: %s rejected response_format %s; trying %s",
                            self.shown_base,
                            mode,
                            following,
                        )
                        mode = following
                        continue
                raise _status_error(exc, key) from None
            except openai.APITimeoutError:
                raise ClassifierTimeout(
                    f"{self.shown_base} timed out", timeout_seconds=deadline - self._clock()
                ) from None
            except openai.APIConnectionError as exc:
                raise ClassifierHTTPError(
                    f"cannot reach {self.shown_base}: {_redact(str(exc.__cause__ or exc), key)}",
                    status_code=None,
                ) from None
            except _TRANSPORT_ERRORS as exc:
                raise ClassifierHTTPError(
                    f"transport error from {self.shown_base}: {type(exc).__name__}",
                    status_code=None,
                ) from None
            memory.mode, memory.dropped = mode, dropped
            return _decode(raw)

    def _body(self, names: list[str], mode: Mode, dropped: frozenset[Droppable]) -> dict[str, Any]:
        """The request fields beyond model/messages/user (sent as the body's extra fields)."""
        body: dict[str, Any] = {}
        if "temperature" not in dropped:
            body["temperature"] = self.temperature
        limits = mode == "json_schema" and "schema_limits" not in dropped
        tokens = self.max_tokens(names, limits=limits)
        if "max_completion_tokens" in dropped:
            body["max_tokens"] = tokens
        else:
            body["max_completion_tokens"] = tokens
        if "metadata" not in dropped:
            body["metadata"] = {"tags": self.config.all_tags()}
        if mode == "json_schema":
            body["response_format"] = response_format_json_schema(names, limits=limits)
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    def max_tokens(self, names: list[str], *, limits: bool) -> int:
        """The completion-token cap of one request: ``llmMaxTokens`` when the config sets it;
        otherwise, with a bounded schema, what the longest valid answer needs
        (`answer_token_budget`), at most the default ``llmMaxTokens``."""
        configured = self.config.llm_max_tokens
        if "llm_max_tokens" in self.config.model_fields_set or not limits:
            return configured
        return min(configured, answer_token_budget(names))

    async def _post(
        self,
        client: openai.AsyncOpenAI,
        messages: list[dict[str, str]],
        names: list[str],
        mode: Mode,
        dropped: frozenset[Droppable],
        deadline: float,
    ) -> bytes:
        timeout = max(0.001, deadline - self._clock())
        async with client.chat.completions.with_streaming_response.create(
            model=self.model,
            messages=messages,  # type: ignore[arg-type]
            user=ATTRIBUTION_USER,
            extra_headers={CALLER_HEADER: CALLER_VALUE},
            extra_body=self._body(names, mode, dropped),
            timeout=timeout,
        ) as response:
            declared = response.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > MAX_RESPONSE_BYTES:
                raise ClassifierOutputError(f"oversized answer: {declared} bytes")
            body = bytearray()
            async for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_RESPONSE_BYTES:
                    raise ClassifierOutputError(
                        f"oversized answer: more than {MAX_RESPONSE_BYTES} bytes"
                    )
            return bytes(body)

    def _interpret(
        self, completion: _Completion, request: ClassifyInput, latency_ms: float
    ) -> Classification:
        """Check the completion against the contract and build the `Classification`."""
        if completion.error is not None:
            raise ClassifierHTTPError("the endpoint answered 200 with an error", status_code=200)
        if not completion.choices:
            raise ClassifierOutputError("the answer has no choices")
        choice = completion.choices[0]
        message = choice.message or _Message()
        if message.refusal or choice.finish_reason == "content_filter":
            raise ClassifierOutputError("the model refused", reason="llm_refusal_fallback")
        if choice.finish_reason == "length":
            raise ClassifierOutputError(
                "the answer was cut off (finish_reason=length)", reason="llm_truncated_fallback"
            )
        usage = _usage(completion.usage)
        max_tokens = self.config.llm_max_tokens
        if usage is not None and usage.completion_tokens > max_tokens:
            raise ClassifierOutputError(
                f"oversized answer: {usage.completion_tokens} completion tokens > {max_tokens}"
            )
        content = _text(message.content)
        if not content.strip():
            raise ClassifierOutputError("the answer is empty")
        if len(content) > max_tokens * MAX_CONTENT_CHARS_PER_TOKEN:
            raise ClassifierOutputError(f"oversized answer: {len(content)} characters")
        try:
            answer = Answer.model_validate(parse_lenient(content))
        except ValidationError as exc:
            where = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}"
                for e in exc.errors()[:3]
            )
            raise ClassifierOutputError(f"the answer does not fit the schema: {where}") from None
        return _selection(answer, request, self.name, usage, latency_ms)


def _selection(
    answer: Answer, request: ClassifyInput, label: str, usage: Usage | None, latency_ms: float
) -> Classification:
    candidates = {name for name, _ in request.tools}
    kept: list[str] = []
    dropped: list[str] = []
    duplicates = 0
    for name in answer.tools:
        name = name.strip()
        if name in kept:
            duplicates += 1
        elif name in candidates:
            kept.append(name)
        elif name not in dropped:
            dropped.append(name)
    if dropped and not kept:
        raise ClassifierOutputError(f"every selected tool is unknown: {dropped[:5]}")
    reasoning = " ".join(answer.reasoning.split())[:REASONING_CHARS]
    return Classification(
        selected=tuple(kept),
        confidence=answer.confidence,
        scores=dict.fromkeys(kept, answer.confidence),
        reasoning=reasoning,
        classifier=label,
        dropped=tuple(dropped),
        duplicates=duplicates,
        usage=usage,
        latency_ms=latency_ms,
    )


def _decode(raw: bytes) -> _Completion:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise ClassifierOutputError("the response body is not JSON") from None
    if not isinstance(data, dict):
        raise ClassifierOutputError("the response body is not a JSON object")
    try:
        return _Completion.model_validate(data)
    except ValidationError:
        raise ClassifierOutputError("the response is not a chat completion") from None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def _usage(usage: _Usage | None) -> Usage | None:
    if usage is None:
        return None
    details = usage.prompt_tokens_details
    return Usage(
        prompt_tokens=usage.prompt_tokens or 0,
        cached_tokens=(details.cached_tokens or 0) if details else 0,
        completion_tokens=usage.completion_tokens or 0,
    )


def _status_error(exc: openai.APIStatusError, key: str | None) -> ClassifierHTTPError:
    status = exc.status_code
    reason = {401: "llm_auth_fallback", 403: "llm_auth_fallback"}.get(status)
    if status == 404:
        reason = "llm_unknown_model_fallback"
    elif status == 429:
        reason = "llm_rate_limited_fallback"
    return ClassifierHTTPError(
        f"HTTP {status} from the classifier endpoint: {_redact(str(exc), key)}",
        status_code=status,
        reason=reason or "llm_error_fallback",
    )


# ---------------------------------------------------------------- voted mode


def votes_needed(samples: int) -> int:
    """Votes a tool needs to be kept: a third of the answering samples, rounded up."""
    return max(1, math.ceil(samples / 3))


class VotedClassifier:
    """Benchmark mode: `n` samples at `temperature`, combined by a recall-friendly vote.

    The samples run concurrently. At least half of them (rounded up) must answer, or the
    first sample's error is raised. Over the m samples that answered, a tool is kept when
    at least ``ceil(m / 3)`` of them selected it (n=3: the union; n=5: two votes), ordered by
    votes; its score is its vote share. Confidence is the mean of the samples'; usage is
    summed; latency is the wall time of the whole vote.
    """

    def __init__(
        self,
        config: ResolverConfig,
        *,
        n: int = 5,
        temperature: float = 0.7,
        pool: ClientPool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if n < 1:
            raise ValueError("n must be at least 1")
        self.n = n
        self.sampler = LLMClassifier(config, temperature=temperature, pool=pool, clock=clock)
        self.name = f"llm-voted:{config.llm_model}x{n}@{temperature:g}"
        self._clock = clock

    async def classify(self, request: ClassifyInput) -> Classification:
        start = self._clock()
        results = await asyncio.gather(
            *(self.sampler.classify(request) for _ in range(self.n)), return_exceptions=True
        )
        answers = [r for r in results if isinstance(r, Classification)]
        failures = [r for r in results if isinstance(r, BaseException)]
        for failure in failures:
            if not isinstance(failure, ClassifierError):
                raise failure
        if len(answers) < math.ceil(self.n / 2):
            first = failures[0]
            assert isinstance(first, ClassifierError)
            raise first
        return combine_votes(answers, self.name, round((self._clock() - start) * 1000.0, 3))


def combine_votes(answers: list[Classification], label: str, latency_ms: float) -> Classification:
    """Combine sample answers by the `VotedClassifier` rule."""
    m = len(answers)
    votes: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for answer in answers:
        for name in answer.selected:
            votes[name] += 1
            first_seen.setdefault(name, len(first_seen))
    need = votes_needed(m)
    kept = sorted((t for t in votes if votes[t] >= need), key=lambda t: (-votes[t], first_seen[t]))
    usages = [a.usage for a in answers if a.usage is not None]
    usage = (
        Usage(
            prompt_tokens=sum(u.prompt_tokens for u in usages),
            cached_tokens=sum(u.cached_tokens for u in usages),
            completion_tokens=sum(u.completion_tokens for u in usages),
        )
        if usages
        else None
    )
    dropped = tuple(dict.fromkeys(n for a in answers for n in a.dropped))
    return Classification(
        selected=tuple(kept),
        confidence=sum(a.confidence for a in answers) / m,
        scores={t: votes[t] / m for t in votes},
        reasoning=answers[0].reasoning,
        classifier=label,
        dropped=dropped,
        duplicates=sum(a.duplicates for a in answers),
        usage=usage,
        latency_ms=latency_ms,
    )
