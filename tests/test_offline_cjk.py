"""The offline classifier's CJK handling: bigrams for partial overlap, whole keyword words
(matched as substrings, so a Korean particle or a Japanese inflection may follow) for more."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import resolver._offline as offline
from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest
from resolver._text import cjk_words, find_word

TOOLS = [
    ToolInfo(name="status_board", description="Show the status board."),
    ToolInfo(name="agent_report", description="Collect a report from an agent."),
    ToolInfo(name="photo_upload", description="Upload a photo."),
]


@pytest.fixture(autouse=True)
def _no_glossary(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about CJK terms as the prompt has them; the glossary's English glosses
    (tests/test_glossary.py) would add Latin terms to every Chinese prompt."""
    monkeypatch.setattr(offline, "GLOSSARY", False)


def resolver_with_keywords(tmp_path: Path, keywords: dict[str, list[str]]) -> Resolver:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps({"schemaVersion": 1, "keywords": keywords}))
    # the lexical scores alone: no conversation head to take a short question for small talk
    config = ResolverConfig(
        catalogOverridesFile=str(catalog), coreTools=[], offlineConversationHead=False
    )
    return Resolver(config)


def scores(resolver: Resolver, prompt: str) -> dict[str, float]:
    res = asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=TOOLS)))
    return {c.name: c.score for c in res.candidates}


def test_cjk_words_are_the_cjk_chunks_of_a_phrase() -> None:
    assert cjk_words("에이전트 보고 status") == ["에이전트", "보고"]
    assert cjk_words("汇报 x 看") == ["汇报"]  # one character alone is not a word


def test_a_korean_keyword_word_matches_with_a_particle_attached(tmp_path: Path) -> None:
    """'에이전트한테' (to the agent) contains the keyword word '에이전트' whole."""
    resolver = resolver_with_keywords(tmp_path, {"agent_report": ["에이전트 보고"]})
    got = scores(resolver, "에이전트한테 물어봐")
    assert got["agent_report"] > 0 and got["status_board"] == 0


def test_a_whole_word_outweighs_more_bigrams_spread_over_other_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """agent_report shares more bigrams with the prompt (打开, 开状, 状态, 态看, 看板), but none
    of its keyword words is in the prompt whole; status_board's one word '状态看板' is, and it ranks
    first. Without whole-word matching the bigram count would win."""
    keywords = {
        "status_board": ["状态看板"],
        "agent_report": ["打开门", "开状元", "状态栏", "态看法", "看板娘"],
    }
    got = scores(resolver_with_keywords(tmp_path, keywords), "打开状态看板")
    assert got["status_board"] > got["agent_report"] > 0
    monkeypatch.setattr(offline, "CJK_WORD_WEIGHT", 0.0)
    got = scores(resolver_with_keywords(tmp_path, keywords), "打开状态看板")
    assert got["agent_report"] > got["status_board"]


def test_a_full_width_comma_separates_clauses_like_an_english_comma(tmp_path: Path) -> None:
    """'take a photo with the nursery camera, send it to my wife': the second clause's tool is
    kept although the first clause scores far higher, as with ", " in English."""
    keywords = {"photo_upload": ["摄像头", "拍照", "照片"], "agent_report": ["发给"]}
    prompt = "用婴儿房的摄像头拍照，照片发给我老婆"
    resolver = resolver_with_keywords(tmp_path, keywords)
    res = asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=TOOLS)))
    got = {c.name: c.score for c in res.candidates}
    assert got["agent_report"] < 0.5 * got["photo_upload"]  # below the whole-prompt cut-off
    assert res.tools_allow is not None
    assert set(res.tools_allow) == {"photo_upload", "agent_report"}


def test_words_in_one_script_leave_the_other_scripts_scores_unchanged(tmp_path: Path) -> None:
    """BM25 length normalisation is per script: giving a tool many Chinese keywords does not
    make it 'longer' (lower-scoring) for an English prompt, and English words not for a
    Chinese one."""
    base = {"photo_upload": ["upload photo", "照片上传"], "agent_report": ["report", "汇报"]}
    more_cjk = {
        **base,
        "photo_upload": [*base["photo_upload"], *[f"上传{chr(0x4E00 + i)}照片" for i in range(30)]],
    }
    more_latin = {**base, "agent_report": [*base["agent_report"], *[f"word{i}" for i in range(30)]]}

    def pair(keywords: dict[str, list[str]], prompt: str, sub: str) -> dict[str, float]:
        folder = tmp_path / sub
        folder.mkdir(exist_ok=True)
        return scores(resolver_with_keywords(folder, keywords), prompt)

    english = "upload this photo and report"
    assert pair(base, english, "a") == pair(more_cjk, english, "b")
    chinese = "把照片上传然后汇报"
    assert pair(base, chinese, "c") == pair(more_latin, chinese, "d")


def test_a_korean_keyword_word_starts_a_word_never_sits_inside_one(tmp_path: Path) -> None:
    """Korean separates words with spaces: '코드' (code) is in '코드를' (code + particle) but
    not in '디스코드' (Discord), where a substring match would find it."""
    assert find_word("디스코드에 올려줘", "코드") == -1
    assert find_word("디스코드에 코드를 올려줘", "코드") == 6
    assert find_word("打开状态看板", "状态") == 2  # Chinese: anywhere
    resolver = resolver_with_keywords(tmp_path, {"agent_report": ["코드 보고"]})
    inside = scores(resolver, "디스코드에 올려줘")["agent_report"]  # a shared bigram only
    whole = scores(resolver, "코드를 올려줘")["agent_report"]
    assert 0 < inside < whole / 2


@pytest.mark.parametrize(
    ("keyword", "prompt"),
    [
        ("写真って何", "好きな食べ物ってある？"),  # a particle bigram ("って")
        ("什么照片", "告诉我什么是区块链"),  # a function word, whole ("什么")
        ("사진 해줘", "아무 얘기나 해줘"),  # a Korean request ending as a keyword word ("해줘")
        ("写真がない", "聞いてない"),  # two hiragana: an inflection ("ない")
    ],
)
def test_a_cjk_function_word_is_no_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keyword: str, prompt: str
) -> None:
    """A tool whose keyword holds a Chinese, Japanese or Korean function word is not matched
    by a prompt that shares only that word (`CJK_STOPWORDS`); with the rule off it is."""
    resolver = resolver_with_keywords(tmp_path, {"photo_upload": [keyword]})
    assert scores(resolver, prompt).get("photo_upload", 0.0) == 0.0
    monkeypatch.setattr(offline, "CJK_STOPWORDS", False)
    resolver = resolver_with_keywords(tmp_path, {"photo_upload": [keyword]})
    assert scores(resolver, prompt).get("photo_upload", 0.0) > 0.0


def test_a_cjk_content_word_still_matches(tmp_path: Path) -> None:
    resolver = resolver_with_keywords(tmp_path, {"photo_upload": ["写真をアップロード"]})
    assert scores(resolver, "この写真をアップロードしてください")["photo_upload"] > 0.0
