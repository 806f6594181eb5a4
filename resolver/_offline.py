"""The embedded offline classifier: no network, no key.

How it decides (README, "Offline classifier"):

1. **Index** (built once per catalog fingerprint + candidate set, cached): BM25 over three
   weighted fields — the tool name split into words (x3), the catalog's keyword lexicon (x2,
   any language) and the effective description (x1). Per-posting BM25 weights are precomputed,
   so a turn costs one dictionary lookup per query term.
2. **Query**: the prompt's terms (stemmed words, CJK bigrams, and every CJK keyword word found
   whole in the prompt — a whole word outweighs partial bigram overlap); a query word not in the
   vocabulary is mapped to vocabulary words one edit away, as stems and as written (typos:
   "remnd" -> remind, "postgress" -> postgres), at a discount; a value the prompt carries
   counts as its word (a link, with or without "https://", "url"; an SQL statement or a named
   table "sql"; a file name "file"; a street address "address"; a repository "repository" and
   "owner": `_ENTITIES`);
   the last user messages add a damped contribution (follow-ups). For the tools without
   catalog keywords, a word's English synonyms and the words it implies ("rows" -> "sql")
   join at a fraction of its weight (`_synonyms`).
3. **Segments**: a prompt that asks for several things ("..., then ...; also ..."; the
   full-width "，" and "、" count as commas) is split into clauses, and each clause's best
   tools are kept, so every sub-request is covered.
4. **Cut-off** from the score distribution, not a fixed k: keep tools scoring at least a
   fraction of the best; a weak best score lowers the fraction (widen for recall).
5. **Deprecated tools**: a tool whose description says it is deprecated in favour of another
   candidate scores below that replacement (`_successors`).
6. **Look-up**: a clause that asks about the current state of the world (an ask cue and a
   current cue of the catalog's ``lookup`` section: "when ... today", "几点 ... 明天") also gets
   the catalog's look-up tools (`_lookup_list`).
7. **Semantic extra** (optional, ``offlineSemantic``): a packaged multilingual embedding model
   adds a bonus to the tools the prompt stands out for before the cut-off (`_semantic`); each
   clause's most similar tool joins the surface when the model is sure of it (`_clause_picks`);
   its conversation head empties a social turn unless the prompt says a tool's whole name.
   Without the extra, the lexical conversation head (`_ngram_head`: the turn's character
   n-grams) does the same (`NGRAM_HEAD`); with it, both heads read the turn together
   (`BothHeads`).
8. **A named server**: when the prompt names an MCP server (also mistyped by a letter left
   out, added or swapped), the other tools' evidence from the words its tools match too is
   discounted (`_prefer_named`), in the whole prompt and in each of its clauses: its tools
   outrank look-alikes.
9. **Entry tools**: a picked MCP server tool that takes an identifier brings its server's
   search tool, a link in the prompt its server's tools that open a URL, a picked tool that
   fills in a form its server's click tool, a named channel a chat server's post tool, a
   tool acting on one thing the lister of such things, and any pick its server's general
   reader (``kubectl_get``) (`_entry_picks`).
10. **A product's kind**: a word for what an MCP server's product holds that the server's own
   tools never say ("the shop database" for ``postgres__query``) keeps that server's best tool
   (`_kind_lists`).
11. **A thing that names its tool**: a ``#channel`` or an SQL statement in the prompt keeps
   the best tool for its word ("channel", "sql"), as a clause keeps its best (`_entity_lists`).
"""

from __future__ import annotations

import collections
import copy
import functools
import heapq
import itertools
import math
import operator
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ._catalog import EffectiveCatalog
from ._classify import Classification, ClassifyInput
from ._conversation import Markers, has_marker, markers_in, task_text, without_markers
from ._data import built_once
from ._glossary import gloss, glossary
from ._lang import (
    english_words,
    latin_language,
    letter_hits,
    person_roles,
    proper_names,
    stopwords,
)
from ._limits import MAX_ID_CHARS
from ._ngram_head import NgramConversation
from ._semantic import SemanticScorer, fuse, group_max, passage_text
from ._synonyms import products, products_in, related, synonyms
from ._text import FirstChars, cjk_words, find_word, fold, has_cjk, stem, tokens
from ._tool_head import tool_head

GLOSSARY = True
"""Gloss other-language words with their English (`_glossary`) before matching."""
SPELLINGS = True
"""Typo matching also compares the prompt's words as written with the candidates' words as
written (`_near_spellings`), not only their stems."""
SYNONYMS = True
"""Add a prompt word's English synonyms to its query (`_synonyms`) at `SYNONYM_WEIGHT`."""
SYNONYM_WEIGHT = 0.5
"""A synonym counts this fraction of the word the prompt used."""
RELATED = True
"""Add the words a prompt's cue words imply (`_synonyms.related`: "rows" -> "sql") to its
query at `RELATED_WEIGHT`."""
RELATED_WEIGHT = 0.35
"""A related word counts this fraction of the cue the prompt used."""
PRODUCTS = True
"""Index a tool without catalog keywords whose name holds a product's name (`_synonyms.products`:
``postgres__query``) with the words users say for that product ("table", "rows", "column")
at `PRODUCT_WEIGHT` of a description word."""
PRODUCT_WEIGHT = 0.35
"""A product word counts this fraction of a description word (set before measuring, like
`RELATED_WEIGHT`: implied evidence, never as strong as the tool's own text)."""

CJK_STOPWORDS = True
"""Chinese, Japanese and Korean function words (`catalogs/language.json`: "って", "什么",
"一下", "해줘") are no query terms, as another Latin-script language's are not: a catalog
keyword word or a bigram that is one says nothing about the topic."""

LOOKUP = True
"""A question about the current state of the world gets the look-up tools (`_lookup_list`)."""
IMPLIED = True
"""A clause that states a situation needing a tool without its words ("while I'm driving",
"hands are full") keeps the tool as its own pick (the catalog's ``implied`` phrases,
`_implied_lists`)."""

NAME_WEIGHT = 3.0
KEYWORD_WEIGHT = 2.0
DESCRIPTION_WEIGHT = 1.0
DESCRIPTION_TERMS = 4
"""A tool's description contributes its strongest this-many query terms to a turn's score."""
PARAMETER_WEIGHT = 0.6
"""A word met only in the host's parameter schema (a property name, an enum value) counts
this fraction of a description word."""
HISTORY_WEIGHT = 0.35
HISTORY_DAMP = 0.3
"""History weighs this much less when the prompt alone has strong evidence."""
TYPO_WEIGHT = 0.7
REAL_WORDS = True
"""A prompt word spelt as an English word (`english_words`: "plant", "bored", "decent") is
that word, not a typo of an index word one edit away ("plan", "bord" of the dashboard's French
keyword "tableau de bord", "recent"); so is a proper name the prompt writes capitalised
(`proper_names`: "Paris" is not "pair"), while a lower-case "chanel" is still "channel"."""
K1 = 1.2
B = 0.75
RELATIVE_CUTOFF = 0.5
"""Keep candidates scoring at least this fraction of the best score..."""
WEAK_RELATIVE_CUTOFF = 0.45
"""...or this fraction when the best score is weak (widen for recall)."""
WEAK_SCORE = 5.0
SEGMENT_RELATIVE_CUTOFF = 0.7
SEGMENT_PICKS = 3
FAMILY_SEPARATOR = "__"
"""OpenClaw names an MCP server's tools ``<server>__<tool>``: those are a family."""
FAMILY_PICKS = 3
"""A family the prompt names keeps its best this-many tools."""
ENTRY_TOOLS = True
"""An MCP server's entry tools join its picked tools (`_entry_picks`): the server's search
tool when a picked tool of it takes an identifier (a Notion page is found by its title before
it is updated), and the server's tool that takes a URL when the prompt holds a link (a page is
opened before it is audited)."""
ENTRY_URL_TOOLS = 3
"""At most this many of a server's tools that take a URL join (in the host's order)."""
FORM_SUBMIT = True
"""A UI automation server's click tool joins its picked tool that fills in a form's fields
(`_entry_picks`): a filled form is submitted with a click ("fill in the signup form with ..."
needs ``browser_fill_form`` and ``browser_click``). From the tools' names only: a server with a
tool named "click" and tools named "fill" or "type"."""
LISTERS = True
"""A server's tool that lists a kind of thing joins its picked tool that acts on one such
thing (`_listers`): ``get_network_request`` takes a request id that ``list_network_requests``
finds, ``get_issue`` an issue number that ``list_issues`` finds ("which cookies does the login
page set" reads one request, found in the list). From the tools' names only: the same words
after the verb, ``list`` before them."""
PRODUCERS = True
"""A picked tool that takes an identifier which another candidate's description says it
lists brings that candidate (`_producers`): ``conversations_turn`` takes a ``conversationRef``,
and ``conversations_list`` "List[s] external conversations as stable conversationRef values";
without it the model cannot get the identifier in the same turn. From the tools' text only:
a word of a tool's parameters or description shaped like an identifier (``conversationRef``,
``sessionKey``, ``page_id``) that a candidate with a name word "list" or "search" says in its
description."""
CHANNEL_POST = True
"""A chat server's tool that posts a message (``slack_post_message``: name words "post" or
"send" and "message") joins its picked tools when the prompt names a channel ("#db-oncall"):
a channel is read or written to, and "drop a heads-up in #db-oncall", "put a summary in
#board-prep", "thank everyone in #volunteers" write with verbs no tool says. From the tools'
names only."""
KIND_PICKS = 1
"""An MCP server named after a product (``postgres__query``) keeps this many of its best tools
when the prompt says a word for what that product holds that the server's own tools never say
("what was our average basket? it's in the store's database": "database" names a wiki
server's database tools, which outscore the SQL tool, and is only a product word of Postgres;
`products`). The word names the server's kind, so the server stays on the surface. 0 = off."""
ENTITY_PICKS = 1
"""A thing in the prompt whose shape says which kind of tool acts on it (`ENTITY_PICK_TERMS`)
keeps that many of the best non-core tools for its term, as a clause keeps its best: "open a
draft PR ... then drop the link in #frontend" — the channel's clause has three weak words
("drop", "link", "review") that outscore the chat tools, and without a picked chat tool
`CHANNEL_POST` has no server to add the post tool for. 0 = off."""
ENTITY_PICK_TERMS = frozenset({"channel", "sql"})
"""The `_ENTITIES` terms whose shape names one kind of tool: a ``#channel`` is only a chat
channel, an SQL statement only a database's. Not a link (its openers join as `ENTRY_TOOLS`),
a file name (built-in and server file tools alike), an ``owner/name`` (also a path or
"and/or") or a street address (a place to look up or to route to). Measured on the eleven case
sets with each kind alone: the channel and SQL gain turns on five and one held-out sets for
0.0-0.07 more tools a turn; the others gained at most one turn for up to 0.4 more."""
SERVER_READER = True
"""A server's general reader joins whenever one of its tools is picked (`_reader`): the tool
named by a read verb alone (``get``, ``list``; after the word its tools' names start with, as
``kubectl_get`` among ``kubectl_apply``, ``kubectl_describe``, ...) reads any of the server's
things, and a task on them usually starts by looking ("whats running in the cluster",
"describe the Pending pods")."""
NAMED_SERVER_OTHERS = 0.5
"""When the prompt names an MCP server ("in Notion", "use Playwright"), another tool's evidence
from words that the named server's tools match too counts this fraction of itself: the named
server's tools replace other servers' and the built-in tools that do the same thing, and a tool
the prompt asks for with other words keeps its score ("remember that Ana's team chats on Slack"
keeps the memory server's tools: Slack's tools do not match "remember") (`_prefer_named`).
1.0: off."""
CLAUSE_PICK_GAP = 0.008
"""Semantic extra: each clause's most similar tool joins the surface when its cosine
similarity leads the runner-up's by at least this much — a clause the embedding is sure about,
whatever words it shares with the tools ("... then tell me whether I need an umbrella in Oslo
tomorrow" and a forecast tool) (`_clause_picks`). 0: off."""
CLAUSE_PICK_MAX = 8
"""At most this many clauses of a prompt are embedded for `_clause_picks` (one query each)."""
PHRASE_PICK_SIM = 0.86
"""Semantic extra: each clause's closest catalog phrase brings its tool when their cosine
similarity is at least this and the tool leads every other tool's closest phrase by
`PHRASE_PICK_GAP` (`_clause_picks`). The phrases are the candidates' keywords and implied
phrases of the effective catalog (`_catalog_phrases`), embedded as queries, so a clause is
compared with what users say, query to query: "can't look away from the screen" comes close to
the text-to-speech tool's "can't look at the screen", which no word-level rule matches. 1.0: off.
"""
PHRASE_PICK_GAP = 0.02
"""The lead `PHRASE_PICK_SIM` asks for. Without it (a bar of 0.88 alone) the picks gained as
many read compositional turns but added 0.4-0.6 tools a turn (the curated set 11.99 -> 12.22);
with it, 0.00-0.08 on those sets (0.17 at most on the MCP sets). Both chosen together on the
read compositional sets (first to sixth), the curated and the parallel set, among bars
0.85-0.90 and leads 0-0.03, before the eighth compositional set was first measured."""
MAX_CATALOG_PHRASES = 20_000
"""At most this many catalog phrases are embedded for a surface (`_catalog_phrases`)."""
NGRAM_HEAD = True
"""The lexical conversation head (`_ngram_head`, config ``offlineConversationHead``): without the
semantic extra (or when its model is missing) it reads the turn instead of the semantic head; a
turn at or above its threshold gets the core tools only, with the same exceptions as the
semantic head's below. With the extra, the two heads read the turn together (`BothHeads`), when
the semantic head holds a bar for this lexical head; a prompt longer than the lexical head
judges is the semantic head's alone."""
HEAD_YIELDS_TO_NAMES = True
"""A prompt the conversation head calls conversation is still a task when it
says a candidate's whole multi-word name or keyword phrase."""
HEAD_SURE_P = 0.95
"""...but at or above this probability of conversation a catalog keyword phrase alone does not
make it one: a phrase is a topic as often as a request ("the group chat has been chaos all
morning lol" says `conversations_list`'s "group chat"); a tool's whole multi-word name still
does ("what's the definition of the word serendipity" beside `word_definition`), as do the other
exceptions below. 1.0: every phrase counts."""
HEAD_YIELDS_TO_VALUES = True
"""...and when it holds a value a tool acts on (a link, a path, a file name, a channel, SQL, an
address: `_ENTITIES`, `_VALUE`) or names an MCP server ("compare config/app.yaml and
config/db.yaml on the filesystem server"): the evidence that keeps a topical clause a task
(`_asks_nothing`) keeps the turn a task too."""
HEAD_YIELDS_TO_UNLISTED = True
"""...and when the tool it matches best (but the core ones) has no catalog keywords: an MCP
server's, a plugin's, an operator's own tool. The heads learnt what a task is from utterances
written for the default tools and the MCP servers the project measures; a surface's own tools
make tasks of turns they never saw ("my dinner was 45 euros" beside a ledger tool, "how long by
car to Lyon" beside a travel-time tool), and recall comes first."""
HEAD_PER_CLAUSE = True
"""A prompt the head calls conversation as a whole is still a task when one of
its clauses (`clauses_of`; `_clause_asks` says how many are read) is more likely a task than
conversation on its own: a long aside that ends in a request ("ugh, what a week ... anyway, what
I need: remind me at 3 to call the insurer") reads as conversation whole."""
CLAUSE_NEEDS_EVIDENCE = True
"""...and only when that clause is any evidence for a tool beyond the core ones (or holds a value
a tool acts on, says a tool's whole name or keyword phrase, or names a server: what keeps a
topical clause a task in `_asks_nothing`): "honestly, what is wrong with us?" after a story
reads as a task to the head alone but asks nothing any tool on the surface does."""
CLAUSE_TASK_P = 0.5
"""A clause is a task for `HEAD_PER_CLAUSE` when the head's probability that it is conversation
is below this (more likely a task than not), or below the turn's bar when that is lower."""
TOPICAL = True
"""A clause with a marker that takes a topic (the catalog's ``conversation.topical``: "thanks
for ...", "write a haiku about ...", "explain ...", "tips for ...") is conversation however many
words its topic has, when the rest asks for no tool (`_asks_nothing`). Off: such a clause is
conversation only as short as any marker's (`CONVERSATION_LEFT`)."""
TOPICAL_CHECKS = 8
"""At most this many clauses of a prompt are looked at that way (each scores the surface once);
the others stay tasks."""
TOPICAL_PARTS = 4
"""A topical clause of more parts than this (`clauses_of`: "..., and ...") stays a task."""
COVERAGE_PICKS = 6
"""At most this many tools (core tools aside) from the coverage pass (`_coverage`)..."""
COVERAGE_RELATIVE = 0.1
"""...each explaining unexplained evidence worth at least this share of the best score..."""
COVERAGE_MIN = 4.0
"""...and at least this much (about one keyword match)."""
COVERAGE_EXPLAIN = 0.3
"""How much of a term's weight a pick spends (1.0: all of it, when the pick is the term's
strongest match)."""
MAX_SEGMENTS = 32
"""At most this many clauses of a prompt get their own ranking (`_segment_lists`): the first and
the last half of them when there are more (a pasted log or document between a request and its
last step). Each ranking scores the whole surface, so without a bound a 16,000-character
prompt of 900 short clauses on a 10,000-tool surface kept a worker thread busy for half a
minute after its turn had answered. The round robin reads at most `MAX_SELECTED_MULTI` lists
anyway; the case sets' longest prompt has 25 clauses (Seal-Tools)."""
MAX_SELECTED = 16
PER_CLAUSE = 4
"""A prompt of many clauses may keep this many tools per clause..."""
MAX_SELECTED_MULTI = 24
"""...up to this many."""
MIN_TYPO_LENGTH = 4
MIN_QUERY_TYPO_LENGTH = 5
"""A prompt word must have at least this many letters to be read as a typo."""
MAX_TYPO_LENGTH = 24
"""Typo matching only looks at word-like terms (letters only) of 4-24 characters: a hash, a
base64 blob or a long run of one letter is not a misspelt word, and its one-deletion variants
would cost O(length²) time and memory."""
SERVER_TYPOS = True
"""A server's name mistyped by one letter left out, added or swapped still names it
(`_named_families`): "ping the deployments channel on slak"."""
MIN_SERVER_TYPO_LENGTH = 5
"""Server-name terms shorter than this are matched only as written."""
CJK_WORD_WEIGHT = 2.0
"""A CJK keyword word found whole in the prompt counts this many keyword matches..."""
CJK_BIGRAM_WEIGHT = 0.5
"""...and each bigram it shares with the prompt only this fraction of one (partial overlap)."""
_WORD_TERM = "\u00a7"
"""Prefix of whole-word CJK keyword terms in the index (never produced by `tokens`)."""
_SYNONYM_TERM = "\u2248"
"""Prefix of a synonym's postings in the index: the term's, for the tools without catalog
keywords only (`_synonyms`)."""
_PHRASE_TERM = "\u00b6"
"""Prefix of multi-word keyword phrases in the index (matched when all their words are near
one another in the prompt)."""
PHRASE_WEIGHT = 1.5
"""A multi-word keyword phrase found in the prompt counts this many keyword matches..."""
PHRASE_PART_WEIGHT = 0.35
"""...while one of its words alone counts only this fraction of one ("boss" alone is not
"ask my boss"; "tokyo" alone is not the "tokyo night" theme)."""
PHRASE_SLACK = 3
"""A phrase's words match when they all fall within len(phrase) + this many prompt words."""
PERSON_SLOT = True
"""A keyword phrase that names its person with a pronoun ("text her", "tell him", "send him
the photo", "schreib ihm", "écris-lui") holds a slot (`PERSON_TERM`) instead, and the slot is
filled in a prompt by such a pronoun or by a name: a capitalised word, not the first of its
sentence, that no candidate's text holds ("text Ana the address", "tell Marco it moved"; not
in German, which capitalises every noun, nor in a CJK prompt, whose catalog words say it). A
pronoun alone is a stop word, so without the slot "text her" is the word "text", which a
dozen tools' texts share. "them" is no slot: it is a group as often ("wait for all of them",
the agents)."""
PERSON_TERM = "qqperson"
"""The slot's word (`tokens` keeps it as it is; no language has it)."""
_PERSON_PRONOUN = re.compile(
    r"(?<![\w'’])(?:him|her|ihm|ihn|ihr|lui|ele|ela)(?![\w'’])", re.IGNORECASE
)
_PERSON_NAME = re.compile(r"(?<=[\w,'’\"][ \t])[A-ZÀ-Þ][a-zà-ÿ]{1,20}+(?![\w'’-])")
"""A capitalised word after a word on the same line (not the first of a sentence)."""
_PLACE_WORDS = frozenset((
    "in", "at", "on", "near", "from", "into", "around", "across", "via", "à", "au", "aux", "en",
    "sur", "dans", "vers", "près", "de", "du", "des", "em", "no", "na", "nos", "nas", "do", "da",
    "dos", "das", "pelo", "pela", "nel", "nella", "im", "am", "bei", "nach", "von", "aus", "zu",
))  # fmt: skip
"""Prepositions after which a capitalised word is a place, not a person ("à Paris", "in
Lisbon", "nach Berlin")."""
NAME_PHRASE_WEIGHT = 1.0
"""A tool name of two or more words found whole in the prompt counts this many extra name
matches."""

_AND = "(?:and|y|et|und|e)"
"""A bare "and" in the languages the clause marks know."""
_SEGMENT_SPLIT = re.compile(
    r"(?:(?<![.!?;])[.!?;]++(?:\s+|$)|[。！？；，、\n]+\s*"
    r"|(?<!\s)\s++[-–—:]+\s+|[：]"
    r"|,?(?<!\s)\s++(?:and then|then|also|additionally|finally|afterwards|after that|next|plus"
    r"|as well as|y luego|luego|después|y después|puis|ensuite|et ensuite|und dann|dann"
    r"|danach|anschließend|e depois|depois|e então)\s+"
    rf"|,\s+(?:{_AND}\s+)?"
    r"|(?:然后|接着|之后再|再把|并且|それから|そのあと|그리고|그다음)"
    r"|(?<=[\uac00-\ud7a3][고서면])\s+)",
    re.IGNORECASE,
)
r"""Clause boundaries. An ASCII sentence mark ends a clause only before a space or the end:
the dots of a URL, a host name or a file name ("grafana.local:3000", "notes/diary.md") do
not. A boundary that starts with a run of white space (or of sentence marks) starts only where
the run starts, and takes the run whole (``(?<!\s)\s++``): tried from inside a run of 10,000
spaces, each start scanned to the run's end and gave it back a space at a time (17 s for one
prompt; 2 s for a run of full stops)."""
_STREET_EN = (
    r"(?:St|Street|Ave|Avenue|Blvd|Boulevard|Rd|Road|Dr|Ln|Lane|Way|Sq|Square|Pl|Place|"
    r"Plaza|Ct|Court|Hwy|Highway|Pkwy|Parkway|Terrace)"
)
_ADDRESS_WORDS = (
    "rue", "piazza", "piazzale", "viale", "corso", "largo", "calle", "avenida", "paseo", "plaza",
    "carrer", "rambla", "rua", "travessa", "praça", "praca", "alameda", "quai", "boulevard",
)  # fmt: skip
_OF = r"(?:(?:de|del|della|delle|dei|degli|di|da|do|dos|das|du|des|la|le|les|el|los|las)\s++)"
_ADDRESS = re.compile(
    # a house number and an English street word after one to four capitalised words
    rf"\b\d{{1,6}}[A-Za-z]?\s++(?:[A-Z][\w'.-]{{0,30}}+\s++){{1,4}}{_STREET_EN}\b"
    # a house number and a French street word ("18 rue Oberkampf", "5 bis avenue Foch")
    r"|\b\d{1,5}(?:\s?(?:bis|ter))?,?\s++(?i:rue|avenue|boulevard|bd|place|quai|chemin|allée|allee"
    r"|impasse|cours)\s+\w"
    # a Romance street word and a capitalised name; "Via" only with a house number after the
    # name (not "Via Slack, ...")
    rf"|\b(?:{'|'.join(w.capitalize() for w in _ADDRESS_WORDS)})\s++{_OF}?[A-ZÀ-Þ][\w'-]"
    rf"|\bVia\s++{_OF}?[A-ZÀ-Þ][\w'-]{{0,30}}+(?:\s++[A-ZÀ-Þ][\w'-]{{0,30}}+){{0,2}},?\s++\d"
    # a German street and its house number
    r"|\b[A-ZÄÖÜ][a-zäöüß]{2,30}?(?:straße|strasse|str\.|weg|platz|allee|gasse|damm|ufer)"
    r"\s++\d"
    # a Japanese block number (three numbers: "12月1-15日" is a date range), a Chinese street
    # number; no "-ring" street ("Monitoring 2 clusters")
    r"|[\u4e00-\u9fff]\d{1,4}(?:[-－‐]\d{1,4}){2}(?![\d-])|\d{1,4}丁目"
    r"|[\u4e00-\u9fff](?:路|街|大道)\d{1,5}号"
)
_FLIGHT = re.compile(
    r"(?<![\w./#:-])(?!(?:AI|AM|AN|AS|AT|BE|BY|DO|EU|GO|GT|HE|HQ|ID|IF|IN|IS|IT|ME|MY|NO|OF|OK"
    r"|ON|OR|OS|PC|PM|PR|PS|RX|SO|TO|TV|UI|UK|UP|US|VS|WE)\b)"
    r"(?:[A-Z]{2}\s?|(?!Q)[A-Z][0-9]\s|[0-9][A-Z]\s)[0-9]{2,4}(?![\w./:-])"
)
"""A flight number (`_ENTITIES`)."""
_PHONE = re.compile(
    # international, as WhatsApp and Signal take it ("+1 512 555 0199", "+49 171 4402918",
    # "+15551234567"); a North American number with its separators ("(415) 555-0142",
    # "415-555-0142"); not a date ("2024-05-01"), a time range or a sum ("+20%")
    r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{2,4}\)?){2,4}(?![\w%])"
    r"|(?<![\w(-])\(\d{3}\)\s?\d{3}[-. ]\d{4}(?![\w-])"
    r"|(?<![\w.-])\d{3}-\d{3}-\d{4}(?![\w-])"
)
"""A phone number (`_ENTITIES`): a messaging tool's recipient."""
_WEB_TLD = (
    r"(?:com|org|net|io|dev|app|ai|gov|edu|local|example|test|internal|site|shop|store|xyz|tv"
    r"|info|biz|cloud|page|uk|de|fr|es|it|pl|nl|jp|cn|kr|br|pt|ca|au|ch|se|no|eu|us|at|be|dk"
    r"|fi|ie|nz|tw)"
)
"""Top-level domains a host name written without a scheme ends in (`_HOST`): the common
generic ones, the test and local ones, and country codes; not the ones that are also file
extensions ("notes.md", "run.sh", "main.py", "lib.rs")."""
_HOST = (
    r"(?<![\w@./:-])(?:localhost(?::\d{2,5})?"
    rf"|(?:[A-Za-z0-9](?:[A-Za-z0-9-]{{0,61}}[A-Za-z0-9])?\.)+{_WEB_TLD}(?::\d{{2,5}})?)"
    r"(?![\w-]|\.[A-Za-z0-9])"
)
"""A link as people type it, without "https://" ("stripe.com/pricing", "staging.acme.io",
"localhost:5173/login", "intranet.corp.local"): a host name whose last label is a lower-case
web domain (`_WEB_TLD`; "ASP.NET" and "Node.js" are no links), or localhost."""
_SCHEME_LINK = re.compile(r"\b(?:https?://|www\.)[^\s\"'<>()\[\]{}\\]+", re.IGNORECASE)
"""A link with a scheme or "www.": how a tool's text gives one (`TOOL_LINKS_AS_URL`; a host
name a description mentions, "api.github.com", says where the tool goes, not that it takes a
link)."""
_LINK = re.compile(rf"\b(?:(?i:https?://)|www\.|WWW\.|Www\.)[^\s\"'<>()\[\]{{}}\\]+|{_HOST}")
"""A link in a prompt: with a scheme or "www." (as it is written: www, WWW, Www), or a bare
host (`_HOST`)."""
_LINK_HINT = re.compile(rf"\.{_WEB_TLD}\b|localhost|://|www\.|WWW\.|Www\.")
"""What every `_LINK` holds, found fast (literals, case-sensitive): `_LINK` itself, whose
case-insensitive scheme and its host part cost several times as much, runs only where it is
(`_link_in`, the link entity)."""


def _link_in(text: str) -> bool:
    """Whether the first `ENTITY_CHARS` characters of `text` hold a link (`_LINK`)."""
    return (
        _LINK_HINT.search(text, 0, ENTITY_CHARS) is not None
        and _LINK.search(text, 0, ENTITY_CHARS) is not None
    )


_CHANNEL = re.compile(r"(?<![\w&#/])#[A-Za-z][\w-]*[A-Za-z0-9](?![\w-])")
"""A chat channel as users write it ("post it in #sre-oncall"), not an issue number."""
_ENTITIES = (
    (_LINK, ("url",), False, _LINK_HINT),
    (
        re.compile(
            # SQL, not prose that uses its words ("select the photos from yesterday"): upper-
            # case SELECT ... FROM, a star, a column list or an aggregate after "select", or
            # a statement's fixed shape (INSERT INTO t (..., UPDATE t SET c =, ...)
            r"\bSELECT\s.{1,120}?\sFROM\s"
            r"|(?i:\bselect\s+(?:\*|distinct\s|(?:count|sum|avg|min|max)\s*\(|[\w.]+\s*,))"
            r"|(?i:\binsert\s+into\s+[\w.\"`]+\s*(?:\(|values\b))"
            r"|(?i:\bupdate\s+[\w.\"`]+\s+set\s+[\w.\"`]+\s*=)"
            r"|(?i:\bdelete\s+from\s+[\w.\"`]+\s+where\s)"
            r"|(?i:\bcreate\s+(?:table|index|view)\s+[\w.\"`]+\s*(?:\(|on\s|as\s))"
            # an aggregate over a star or a column ("count(*)", "max(loaded_at)", "sum(o.total)")
            r"|(?i:\b(?:count|sum|avg|min|max)\s*\(\s*(?:\*|distinct\s+[\w.]+|[a-z_][\w.]*_[\w.]*"
            r"|[a-z_]\w*\.\w+)\s*\))",
            re.DOTALL,
        ),
        ("sql",),
        False,
        ("elect", "ert", "update", "delete", "create", "("),
    ),
    (
        # a table's columns as an analyst writes them: "events(account_id, occurred_at)",
        # "orders.created_at", "orders: country, total_cents" — snake_case column names
        re.compile(
            r"\b[A-Za-z]\w*\s*[(\uff08:]\s*[a-z]\w*\s*[,\uff0c]\s*[a-z][a-z0-9]*_[a-z]"
            r"|\b[A-Za-z]\w*\s*[(\uff08]\s*[a-z][a-z0-9]*_[a-z]\w*\s*[,\uff0c]"
            r"|\b[a-z]\w*\.[a-z][a-z0-9]*_[a-z]+\b(?!\.)"
        ),
        ("sql",),
        False,
        ("_",),
    ),
    (
        # a database table by its name: "the charges table", "table `user_events`", "Tabelle
        # subscriptions", "orders 表"; not "put it on the table", "the same table", "a markdown
        # table", "the table shows ..." (an English "table X" needs a snake_case or quoted name)
        re.compile(
            r"\b(?:the|our|in|from|into|on)\s++[`\"']?"
            r"(?!(?:the|an|this|that|these|those|my|your|our|its|their|each|every|one|new|same"
            r"|following|whole|entire|above|below|next|first|last|pivot|markdown|html|comparison"
            r"|pricing|summary|periodic|round|dining|kitchen|coffee|truth)\b)"
            r"[a-z][a-z0-9_]{1,40}+[`\"']?\s++tables?\b"
            r"|\btables?\s++(?:[`\"'][a-z][\w.]{1,40}+[`\"']|[a-z][a-z0-9]*+_[a-z0-9_]+)"
            r"|(?i:\b(?:tablas?|tabellen|tabelle|tabelas?|tabella|tabel)\s++[`\"']?[a-z][\w.]{1,40})"
            r"|\b[a-z][a-z0-9_]{1,40}+\s*(?:表(?!格|示|达|情|演|面)|テーブル|테이블)"
        ),
        ("sql",),
        False,
        ("tabl", "tabel", "表", "テーブル", "테이블"),
    ),
    (
        _CHANNEL,
        ("channel",),
        True,
        ("#",),
    ),
    (
        # a file name or path with a common document, data, code or image extension
        # ("todo.txt", "notes/retro.md"), not a host name ("example.com") or an e-mail address
        re.compile(
            r"(?<![\w@/:.-])[\w-]+(?:[./][\w-]+)*\.(?:txt|md|json|csv|tsv|py|js|ts|ya?ml|toml|ini|"
            r"pdf|docx?|xlsx?|pptx?|png|jpe?g|gif|svg|log|html?|xml|sh)\b",
            re.IGNORECASE,
        ),
        ("file",),
        True,
        (".",),
    ),
    (
        # a repository as people write it after a preposition: "stale PRs in acme/checkout",
        # "are the checks green on acme/api #88", "cut release/5.4 from main in acme/platform";
        # not "and/or", "km/h", "HTML/CSS", nor a file name ("in notes/retro.md": `file`). The tools
        # that take one say "repository" and its "owner" (a path said the same way,
        # "in docs/minutes", brings them too: recall first)
        re.compile(
            r"(?<![\w./@:-])(?:in|on|to|from|into|for|at|of|repo|repository)\s++[`\"']?"
            r"(?!(?:and/or|read/write|on/off|yes/no|true/false|input/output|client/server|km/h"
            r"|m/s|w/o|n/a|i/o|either/or|pros/cons|before/after|min/max|am/pm)\b"
            r"|(?-i:[A-Z0-9]{1,6}/[A-Z0-9]{1,6})\b"  # "HTML/CSS", "Q3/Q4"
            rf"|(?:localhost(?::\d+)?|(?:[\w-]+\.)+{_WEB_TLD}(?::\d+)?)/)"  # a link's host
            r"[A-Za-z][\w.-]{0,38}+/[A-Za-z0-9][\w-]{0,99}+(?:\.(?![a-z]{1,5}\b)[\w-]+)*+"
            r"(?![\w/]|\.\w)",
            re.IGNORECASE,
        ),
        ("repositori", "owner"),
        True,
        ("/",),
    ),
    (
        # a flight number, whose status a web search finds: an airline's two-character code
        # and two to four digits ("BA 117", "LH2035", "TP 445", "U2 8721", "6E 204"); not a
        # quarter ("Q3 2024"), a five-digit postcode ("CA 94107"), a product ("MP3", "PS5",
        # "H264"), nor the capitals of common abbreviations or of a word shouted in capitals
        # before a number ("PR 412", "AI 101", "US 101", "CALL ME AT 10", "IN 2025")
        _FLIGHT,
        ("flight",),
        False,
        tuple("0123456789"),
    ),
    (
        # a phone number, the recipient a message is sent to ("text Dale (+1 512 555 0148)",
        # "WhatsApp +49 171 4402918"): the messaging tool's word for a text to a number
        _PHONE,
        ("sms",),
        False,
        ("+", "-", "("),
    ),
    (
        # a street address, which a map or place tool takes: a house number and a street word
        # ("77 Massachusetts Ave", "18 rue Oberkampf", "Torstraße 100", "Via Torino 61"), a
        # Romance street word and a name ("Piazza del Duomo", "Rua Augusta"), a Japanese block
        # number ("道玄坂1-2-3") or a Chinese street number ("建国路88号"). Not Korean: its "로"
        # street suffix is also a common particle ("으로 2")
        _ADDRESS,
        ("address",),
        True,
        tuple("0123456789") + _ADDRESS_WORDS,
    ),
)
"""A value the prompt carries, and the word a tool that takes it uses for it: a prompt with a
link in it counts one "url" term, as if it had said the word ("open https://..." is evidence
for the tools that take a URL); an SQL statement counts one "sql" term; a file name one "file"
term. The third field: the term scores only the tools without catalog keywords, as a synonym
does (a catalogued tool's keywords already say which files its users name; on the default
surface a file name in a prompt otherwise widens the surface with every file tool). The fourth:
strings one of which every match contains, looked for in the lower-cased text before the
pattern is run (most clauses have none), or a pattern that finds what every match holds
(`_LINK_HINT`). They avoid the letters i, k and s, which an ignore-case
pattern also matches in "İ", "ı", "K" and "ſ"."""

_BARE_ENTITY_TERMS = frozenset(term for _, terms, bare, _ in _ENTITIES if bare for term in terms)
TOOL_LINKS_AS_URL = True
"""A link in a tool's description or parameter text is indexed as the word "url", not as its
pieces: "e.g. https://example.com" in a parameter's description says the tool takes a URL, not
that "https", "example" and "com" are its words (they would match every link a prompt holds)."""
HOW_LONG = True
"""An English question's "how long" asks for a duration ("how long's the drive", "how long do I
boil an egg"): it is read as "duration", as the glossary reads the Dutch "hoe lang", not as the
word "long" ("trigger a long-running operation", "long-term goals"). (Other degree questions
keep their word: "how far" is about a distance.)"""
_CAPITALISED = re.compile(r"\b[A-Z][A-Za-z]*+")
_HOW_LONG = re.compile(r"\bhow\s++long\b", re.IGNORECASE)
CLOSE_TO = True
"""An English "close to" is "near" ("a venue close to Cais do Sodré", "close to full"), never
the verb "close" that browser and session tools are named for ("close the tab" has no "to")."""
_CLOSE_TO = re.compile(r"\bclose\s++to\b", re.IGNORECASE)
CLOCK_TIME = True
"""A time of day in a request ("remind me at 10:30", "at 5:40", "Friday at noon", "tous les
jours à 20h", "um 18 Uhr", "a las 7", "午後3時", "오후 3시") is read as the word "schedule" beside
it: a request that names the hour something should happen asks for a scheduler, and the
scheduler's words ("remind") are shared by the event-triggered reminder tool, whose text is
shorter. A duration ("3 hours", "3時間", "3시간") is no time of day. Not an `_ENTITIES` row: those
are values that keep a clause a task whatever its other words (`_holds_value`), and a time of
day is said in conversation too ("my alarm went off at 6:00 and I still overslept")."""
_CLOCK = re.compile(
    # 10:30, 9.30 pm, 20h, 20h30 (not 10:30:15, a ratio 16:9, a version 1.10 or 48h)
    r"(?<![\w:.,/-])(?:[01]?\d|2[0-3])(?::[0-5]\d|[hH](?:[0-5]\d)?)(?![\w:/-]|[.,]\d)"
    r"|(?<![\w:.,/-])(?:1[0-2]|0?[1-9])(?:[:.][0-5]\d)?\s?(?i:[ap]\.?m\.?)(?!\w)"
    r"|(?i:\b(?:at|by|before|until|till|after)\s++(?:noon|midnight)\b)"
    r"|(?<![\w.,])(?:[01]?\d|2[0-3])\s?(?:Uhr\b|o'clock\b)"
    r"|(?i:(?<!\w)(?:a\s++las|às)\s++(?:[01]?\d|2[0-3])(?![\d%]))"
    r"|(?<!\d)(?:[01]?\d|2[0-3])\s?(?:時(?!間)|시(?!간))"
    r"|(?:上午|下午|晚上|早上|凌晨|中午|傍晚|今晚|明早)\s?(?:[01]?\d|2[0-3])\s?点"
    r"|(?<!\d)(?:[01]?\d|2[0-3])点(?:半|钟|[0-5]?\d分)"
)
_SCHEDULE = "schedul"
DAY_WORDS = True
"""A day named in a request ("tonight", "on Friday", "this weekend", "stasera", "domani",
"heute Abend", "demain", "mañana", "明天", "周五", "来週", "내일", "토요일") or a clock time said
with its word in English, Italian, German, Dutch or Swedish ("at 9", "alle 9", "um 9", "om 9",
"kl 9") or in Chinese numerals ("两点半", "三点") is read as the word "schedule", as a time of
day is (`CLOCK_TIME`). English has "tomorrow" and "week" in the scheduler's own text; the day
names and the other languages' words match nothing there (the glossary holds no day word), so
"Domattina alle 9 ricordami di …" scored the scheduler a third of its English twin. A day is
said in conversation too ("I'm off to Lisbon on Friday"), so it is a query term, not a value
(`_ENTITIES`), at `DAY_WEIGHT`, and only beside the request's other terms: a day alone is no
request ("Warum heißt der Donnerstag Donnerstag?")."""
DAY_WEIGHT = 0.5
"""A day's share of the term "schedule": half a word. At a whole word, a weekday in a request
for something else ("our ETL runs late every Monday: reason it through step by step", "she
prefers Tuesday mornings: save that in memory") made the scheduler the best tool, and its bar
cut the tool asked for (two held-out MCP turns lost; 2026-12-07)."""
_DAY_NAME_TEXT = (
    # English
    "tonight monday mondays tuesday tuesdays wednesday wednesdays thursday thursdays friday"
    " fridays saturday saturdays sunday sundays tmrw tmr"
    # Spanish, Portuguese
    " mañana manana lunes martes miércoles miercoles jueves viernes sábado sabado domingo"
    " amanhã amanha"
    # French
    " demain lundi mardi mercredi jeudi vendredi samedi dimanche"
    # German, Dutch, Swedish ("morgen" but not in "guten Morgen", `_DayWords`)
    " morgen übermorgen ubermorgen montag dienstag mittwoch donnerstag freitag samstag sonntag"
    " wochenende overmorgen vanavond vannacht maandag dinsdag woensdag donderdag vrijdag"
    " zaterdag zondag imorgon ikväll ikvall måndag mandag tisdag onsdag torsdag fredag lördag"
    " lordag söndag sondag"
    # Italian
    " domani domattina dopodomani stasera stanotte stamattina lunedì lunedi martedì martedi"
    " mercoledì mercoledi giovedì giovedi venerdì venerdi sabato domenica"
    # Polish
    " jutro pojutrze poniedziałek poniedzialek wtorek wtorku środa środę środe sroda srodę"
    " srode czwartek czwartku piątek piątku piatek piatku sobota sobotę soboty niedziela"
    " niedzielę niedzieli"
)
_DAY_NAMES = frozenset(_DAY_NAME_TEXT.split())
"""The one-word days of `DAY_WORDS`, lower-case, found among a text's words (a set lookup: a
regular expression of them all cost 30-80 µs a query)."""
_LETTER_RUN = re.compile(r"[^\W\d_]+")
_DAY_PHRASES = re.compile(
    # the days of two or more words, in lower-case text
    r"(?<!\w)(?:this\s++(?:morning|afternoon|evening)|(?:this|next|the)\s++weekend"
    r"|esta\s++(?:noche|tarde|noite)|fi[nm]\s++de\s++semana|hoje\s++[àa]\s++noite"
    r"|(?:segunda|ter[çc]a|quarta|quinta|sexta)-feira|ce\s++soir|cet\s++apr[èe]s-midi"
    r"|(?:ce|le)\s++week-end|heute\s++(?:abend|nachmittag|nacht)|i\s++morgon|i\s++kv[äa]ll"
    r"|fine\s++settimana|dzi[śs]\s++wieczorem)(?!\w)"
    # a clock hour said with its word (the minutes' forms are `_CLOCK`'s)
    r"|(?<!\w)(?:at|alle|um|om|kl\.?)\s++(?:[01]?\d|2[0-3])(?![\w%°]|[.,:]\d|\s*%)"
)
_CJK_DAYS = re.compile(
    # Chinese, Japanese, Korean (looked for only in a text with CJK characters)
    r"明天|明早|明晚|今晚|今天晚上|后天|下周|下星期|周[一二三四五六日末]|星期[一二三四五六日天]"
    r"|礼拜[一二三四五六日天]|[一二两三四五六七八九十]{1,3}点(?:半|钟|[一二三四五]?十分)?"
    r"|明日|明後日|今夜|今晩|来週|週末|[月火水木金土日]曜"
    r"|내일|모레|오늘\s*밤|다음\s*주|주말|[월화수목금토일]요일"
)


class _DayWords:
    """`DAY_WORDS`' matcher, with a compiled pattern's `search(text, pos, endpos)`: a day name
    among the text's words (`_DAY_NAMES`), a day of two or more words or an hour said with its
    word (`_DAY_PHRASES`), or a CJK day (`_CJK_DAYS`)."""

    def search(self, text: str, pos: int = 0, endpos: int | None = None) -> bool:
        lower = text[pos : ENTITY_CHARS if endpos is None else endpos].lower()
        if "guten morgen" in lower:
            lower = lower.replace("guten morgen", " ")  # a greeting, not tomorrow
        if not _DAY_NAMES.isdisjoint(_LETTER_RUN.findall(lower)):
            return True
        if _DAY_PHRASES.search(lower) is not None:
            return True
        return has_cjk(lower) and _CJK_DAYS.search(lower) is not None


_DAY = _DayWords()
"""The term of the word "schedule" (Snowball English, as `tokens` writes it)."""
SELF_PLACE = True
"""Where the user is now ("where I am right now", "where am I", "wo ich gerade bin", "où je
suis", "dónde estoy", "dove mi trovo", "onde estou", "今いるところ", "지금 있는 곳", "我在哪") or
where their phone or laptop is ("where's my iPhone", "wo ist mein Handy") is read as the word
"location" beside it: each of those words is a stop word ("where", "I", "am"), so without this
a request about the user's own place holds no term for the tool that reports a device's
location. "where are the files", "dove sono le chiavi" and "where is my package" are no such
place (a thing's place is not the user's, nor is a parcel a device)."""
_DEVICE = (
    r"(?:phone|iphone|android|pixel|galaxy|laptop|macbook|mac|ipad|tablet|watch|handy|telefon"
    r"|téléphone|telephone|tel|portable|ordi|ordinateur|celular|móvil|movil|telefono|cellulare"
    r"|telemóvel|notebook|computer|pc|webcam)"
)
_SELF_PLACE = re.compile(
    r"(?i:\bwhere\s++(?:i\s++am|am\s++i|i'?m(?:\s++at)?|i\s++currently\s++am)\b"
    rf"|\bwhere(?:'s|\s++is|\s++are)\s++my\s++(?:\w+\s+)?{_DEVICE}\b"
    r"|\bmy\s++(?:current\s++)?(?:location|position|whereabouts)\b"
    r"|\bwo\s++(?:ich\s++(?:\w+\s++)?bin|bin\s++ich)\b"
    rf"|\bwo\s++(?:ist|steckt)\s++mein\s++{_DEVICE}\b"
    r"|\boù\s++(?:je\s++(?:suis|me\s++trouve)|suis-je)\b"
    rf"|\boù\s++(?:est|se\s++trouve)\s++mon\s++{_DEVICE}\b"
    r"|\bd[oó]nde\s++(?:estoy|me\s++encuentro)\b"
    rf"|\bd[oó]nde\s++est[aá]\s++mi\s++{_DEVICE}\b"
    r"|\bdove\s++(?:mi\s++trovo|sono(?:\s++(?:io|adesso|ora|in\s++questo\s++momento)\b|\s*+[.?!]|\s*+$))"
    rf"|\bdov'?è\s++il\s++mio\s++{_DEVICE}\b"
    r"|\bonde\s++(?:eu\s++)?(?:estou|t[oô])\b"
    rf"|\b(?:onde\s++est[aá]|cad[eê])\s++(?:o\s++)?meu\s++{_DEVICE}\b)"
    r"|今いる(?:ところ|所|場所)|今どこ|現在地|지금\s?(?:내가\s?)?있는\s?곳|지금\s?어디|내\s?위치"
    r"|我(?:现在)?在哪|我的位置|我所在的"
)
_LOCATION = "locat"
"""The term of the word "location"."""
MY_DEVICE = True
"""The user's own phone, tablet or computer ("my iPad", "my work MacBook", "mon tel", "mein
Handy", "mi móvil", "il mio cellulare", "meu celular") is read as the word "device" beside it:
a request about what is on, or what to do with, a device the user owns is about a paired
device, and a product name ("iPad", "Pixel") or a colloquial word ("tel", "portable") is in no
tool's text."""
_MY_DEVICE = re.compile(
    r"(?i:\b(?:my|mein(?:e[mn]?)?|mon|ma|mi|mis|mio|mia|il\s++mio|meu|minha|o\s++meu)"
    rf"\s++(?:[\w-]+\s++)?{_DEVICE}s?\b)"
)
_DEVICE_TERM = "devic"
"""The term of the word "device"."""
_VALUE = re.compile(
    r"(?<![\w.~/-])~?/[\w.-]++/"  # an absolute path ("/var/log/syslog", "~/notes/")
    r"|(?<![\w.-])[A-Za-z][\w.-]*+/[A-Za-z0-9]"  # a relative path or a repository ("acme/app")
    r"|(?<![\w.+-])[\w.+-]++@[\w-]++\.[A-Za-z]"  # an e-mail address
    r"|(?<![\w.@])@[A-Za-z][\w.-]*"  # a handle ("@lena")
    r"|`[^`\n]{1,400}`"  # code
    r"|(?<!\w)[a-z][a-z0-9]*+[A-Z]"  # a camelCase identifier ("concurrencyPolicy")
    r"|(?<!\w)[A-Za-z][A-Za-z0-9]*+_[A-Za-z0-9]"  # a snake_case one ("session_bucket")
)
"""A value a tool would act on, beside the ones `_ENTITIES` know: a clause that holds one is a
task even with a topical marker ("explain what's in /var/log/syslog", "write a haiku and send it
to @lena", "what does spec.concurrencyPolicy mean")."""
ENTITY_CHARS = 2000
"""Values are looked for in the first this many characters of a text (bounded work)."""
HEAD_SURE_IGNORES_CODE = True
"""A turn the conversation head is sure of (`HEAD_SURE_P`) stays conversation though it quotes
code: "what does this do? `arr.filter(n => n > 10).length`" asks for an explanation, as a
keyword phrase there is a topic. A path, a link, a file name or another value outside the
quotes still makes it a task, and a turn the head is less sure of keeps the quoted code as a
value ("run `npm test`")."""
_CODE = re.compile(r"```[^`]{0,2000}```|`[^`\n]{1,400}`")


def _holds_value(text: str, *, code: bool = True) -> bool:
    """Whether the first `ENTITY_CHARS` characters of `text` hold a value a tool acts on
    (`_VALUE`, `_ENTITIES`): what keeps a clause or a turn a task whatever its other words.
    `code` False: quoted code (`_CODE`) is no such value, nor is what it holds."""
    if not code:
        text = _CODE.sub(" ", text[:ENTITY_CHARS])
    return _VALUE.search(text, 0, ENTITY_CHARS) is not None or any(_entities_in(text))


def _entities_in(text: str) -> Iterator[tuple[tuple[str, ...], bool]]:
    """The `_ENTITIES` in the first `ENTITY_CHARS` characters of `text`: (terms, bare) each."""
    lower = text[:ENTITY_CHARS].lower()
    for pattern, terms, bare, needs in _ENTITIES:
        if isinstance(needs, re.Pattern):
            if needs.search(text, 0, ENTITY_CHARS) is None:
                continue
        elif not any(n in lower for n in needs):
            continue
        if pattern.search(text, 0, ENTITY_CHARS):
            yield terms, bare


_DEPRECATED = re.compile(r"\bdeprecated\b", re.IGNORECASE)
_IDENTIFIER = re.compile(r"[A-Za-z_][\w.-]*[\w]")
DEPRECATED_SHARE = 0.9
"""A deprecated tool's replacement scores at least what the deprecated tool would have, and
the deprecated tool this fraction of it (the replacement ranks first: it is what the server
asks a client to call)."""
_BARE_AND = re.compile(r"(?<!\s)\s++(?:and|et|und|e|(?<!\bil\s)(?<!\bon\s)y)\s+", re.IGNORECASE)
"""A bare "and" between two requests ("look it up and send it to Anna"); not the French "y"
of "il y a", "s'il y a", "on y va" (Spanish "y" is "and"): split there, "regarde s'il y a une
grève demain" would lose its question to one clause and its subject to another."""
_COMMA = re.compile(rf",\s+(?:{_AND}\s+)?|[，、]+\s*", re.IGNORECASE)
"""A clause boundary that is only a comma (", ", ", and ", "，"): what ends a lead-in."""
LEAD_IN_TERMS = 2
"""A comma-ended piece with fewer index terms than this opens the next clause (`clauses_of`)."""


_Postings = tuple[tuple[int, float], ...]
_NO_POSTINGS: tuple[_Postings, _Postings] = ((), ())
_TOOL, _WEIGHT = operator.itemgetter(0), operator.itemgetter(1)


@dataclass(frozen=True)
class _Entry:
    """A tool family's entry tools (`_entries`)."""

    members: frozenset[int]
    search: tuple[int, ...]
    """Its search tools (a name word "search", no identifier parameter)."""
    takes_id: frozenset[int]
    """Its tools with an identifier parameter (``page_id``, ``projectId``)."""
    takes_url: tuple[int, ...]
    """Its tools that take a ``url`` and say "URL" in their description (they open a link)."""
    fills: frozenset[int] = frozenset()
    """Its tools that fill in a form's fields (a name word "fill" or "type")."""
    click: tuple[int, ...] = ()
    """Its click tool (a name word "click", the shortest such name): what submits a form."""
    reader: tuple[int, ...] = ()
    """Its general reader (`_reader`)."""
    listers: Mapping[int, int] = field(default_factory=dict)
    """Its tools that act on one existing thing -> the tool that lists such things
    (`_listers`)."""
    posts: tuple[int, ...] = ()
    """Its tool that posts a message (name words "post" or "send" and "message"; `CHANNEL_POST`)."""


@dataclass(frozen=True)
class _Implied:
    """Every candidate's implied phrases as one set of markers (a turn matches them in one
    pass), and the candidates each phrase implies."""

    markers: Markers
    tools: Mapping[str | tuple[str, ...], tuple[int, ...]]
    """a CJK phrase as folded, a Latin one as its terms -> the candidates it implies"""


@dataclass(frozen=True)
class _Index:
    names: tuple[str, ...]
    weights: Mapping[str, tuple[tuple[int, float, float], ...]]
    """term -> ((tool index, precomputed BM25 weight, the part of it from the description),
    ...)"""
    deletes: Mapping[str, tuple[tuple[str, str], ...]]
    """one-deletion variants of the vocabulary's terms -> ((term, term), ...) (typo matching,
    `_deletion_index`)"""
    cjk_words: tuple[str, ...] = ()
    """CJK keyword words, matched whole in the prompt (particles may follow; `find_word`)"""
    key: tuple[str, int] = ("", 0)
    """(catalog fingerprint, candidate-set hash): this index's cache key, also the semantic
    matrix's, so a turn hashes its candidate set once"""
    phrases: Mapping[str, tuple[tuple[str, tuple[str, ...], int], ...]] = field(
        default_factory=dict
    )
    """word -> ((phrase term, its words, its place among all phrases), ...): the multi-word
    keyword phrases anchored at the word, each at its word that the fewest phrases share (a
    phrase matches only with all its words, so it is looked at only when its rarest is there)"""
    markers: Markers | None = None
    """The catalog's conversation markers, ready to match"""
    families: tuple[tuple[tuple[str, ...], tuple[int, ...]], ...] = ()
    """Tool families (an MCP server's tools, ``<server>__<tool>``; a one-tool server's too): (the
    server name's terms, the member tools' indexes)"""

    successors: tuple[tuple[int, int], ...] = ()
    """(deprecated tool, the candidate its description says to use instead) (`_successors`)"""
    spellings: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    """one-deletion variants of the candidates' words as written -> ((word, its term), ...)
    (typo matching on what was typed, `SPELLINGS`)"""
    lookup: tuple[tuple[int, ...], Markers | None, Markers | None] = ((), None, None)
    """The look-up tools among the candidates, and the ask and current cues that call for
    them (`_lookup_list`)"""
    postings: Mapping[str, tuple[_Postings, _Postings]] = field(default_factory=dict)
    """`weights` split for scoring: term -> (((tool index, weight from the names and keywords),
    ...), ((tool index, weight from the description), ...)), zero parts left out"""
    phrase_words: frozenset[str] = frozenset()
    """Every word of a multi-word keyword phrase"""
    has_synonyms: bool = False
    """Whether `postings` holds stand-in postings (a candidate without catalog keywords has a
    word a synonym or a bare entity can add, `_ENTITIES`)"""
    bare_vocab: frozenset[str] | None = None
    """On a surface that mixes tools with catalog keywords and an MCP server's tools without
    them (the default tools beside a server's), the terms of the tools without: a prompt word
    only the catalogued tools know is still glossed for the others (`_known`). None
    otherwise."""
    entries: tuple[_Entry, ...] = ()
    """Per tool family with entry tools (`_entries`): what a turn that picks one of its tools
    may need first"""
    topical: Markers | None = None
    """The catalog's conversation markers that take a topic (`TOPICAL`)"""
    kinds: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    """term -> the MCP server tools whose server is named after a product the term names the
    kind of, a word none of that server's tools says (`KIND_PICKS`, `_add_product_words`)"""
    producers: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    """tool -> the candidates that list the identifiers it takes (`_producers`)"""
    listed: frozenset[int] = frozenset()
    """The tools with catalog keywords (`HEAD_YIELDS_TO_UNLISTED`)"""
    name_words: tuple[tuple[str, ...], ...] = ()
    """Each name's Latin terms in order, once each (its name phrase's words), as the build
    tokenised them: for `name_objects` and `name_phrases`, without tokenising every name
    again on a turn"""
    implied: _Implied | None = None
    """The candidates' implied phrases in the catalog, ready to match (`_implied_lists`)"""

    @functools.cached_property
    def cjk_set(self) -> frozenset[str]:
        return frozenset(self.cjk_words)

    @functools.cached_property
    def cjk_first(self) -> FirstChars:
        return FirstChars(self.cjk_words)

    @functools.cached_property
    def server_typos(self) -> dict[str, tuple[tuple[str, str], ...]]:
        """The server-name terms of `families` by their one-deletion variants
        (`_deletion_index`, for `_server_typos`)."""
        terms = dict.fromkeys(t for ts, _ in self.families for t in ts)
        return _deletion_index((t, t) for t in terms if _typo_term(t, MIN_SERVER_TYPO_LENGTH))

    @functools.cached_property
    def name_objects(self) -> tuple[tuple[str, ...], ...]:
        """Each name's words after its first, when two or more are left: what the tool acts
        on ("personal essay" of generate_personal_essay), for `_says_task`."""
        return tuple(dict.fromkeys(words[1:] for words in self.name_words if len(words) >= 3))

    @functools.cached_property
    def name_phrases(self) -> frozenset[str]:
        """The phrase terms of the tools' multi-word names (`_build_index`: all of a name's
        Latin words together), for `_says_task`: a keyword phrase is not among them."""
        return frozenset(_PHRASE_TERM + " ".join(w) for w in self.name_words if len(w) >= 2)

    @functools.cached_property
    def positions(self) -> dict[str, int]:
        """Each tool's index by its name."""
        return {name: i for i, name in enumerate(self.names)}

    @functools.cached_property
    def by_name(self) -> tuple[int, ...]:
        """The tools' indexes in name order (a ranking's ties go to the smaller name)."""
        return tuple(sorted(range(len(self.names)), key=self.names.__getitem__))


def _known(index: _Index, word: str) -> bool:
    """Whether the candidates' text already has `word` (a catalog keyword, a description
    word): every term of a Latin word or phrase, or a CJK word as a keyword word. On a mixed
    surface only the text of the tools without catalog keywords counts (`_Index.bare_vocab`):
    "página" in a default tool's keywords does not reach an MCP server's "page"."""
    if has_cjk(word):
        return index.bare_vocab is None and word in index.cjk_set
    terms = tokens(word)
    vocabulary = index.weights if index.bare_vocab is None else index.bare_vocab
    return bool(terms) and all(t in vocabulary for t in terms)


def _script(term: str) -> str:
    return "cjk" if term.startswith(_WORD_TERM) or has_cjk(term) else "latin"


def _typo_term(term: str, min_length: int) -> bool:
    """Whether `term` takes part in typo matching (a word-like ASCII term of bounded length)."""
    return min_length <= len(term) <= MAX_TYPO_LENGTH and term.isascii() and term.isalpha()


def _deletions(term: str) -> set[str]:
    return {term[:i] + term[i + 1 :] for i in range(len(term))}


def _build_index(
    tools: Sequence[tuple[str, str]],
    catalog: EffectiveCatalog,
    key: tuple[str, int],
    params: Sequence[str] = (),
) -> _Index:
    names = tuple(name for name, _ in tools)
    phrases: dict[str, tuple[str, ...]] = {}
    tf_per_tool: list[dict[str, float]] = []
    desc_per_tool: list[dict[str, float]] = []
    written: dict[str, str] = {}  # the candidates' words as written -> their terms
    product_words = products() if PRODUCTS and PRODUCT_WEIGHT > 0.0 else {}
    implied: list[tuple[int, list[str]]] = []  # tool -> its product's words
    name_words: list[tuple[str, ...]] = []  # per tool: its name's Latin terms (`_Index`)
    for position, (name, description) in enumerate(tools):
        tf: dict[str, float] = {}
        name_terms = tokens(name[:MAX_ID_CHARS], words=written)
        for term in name_terms:
            tf[term] = tf.get(term, 0.0) + NAME_WEIGHT
        whole = tuple(dict.fromkeys(t for t in name_terms if not has_cjk(t)))
        name_words.append(whole)
        if NAME_PHRASE_WEIGHT and len(whole) >= 2:
            # all of a name's words together ("employee ... information" for get_employee_info)
            whole_name = _PHRASE_TERM + " ".join(whole)
            tf[whole_name] = tf.get(whole_name, 0.0) + NAME_WEIGHT * NAME_PHRASE_WEIGHT
            phrases[whole_name] = whole
        seen: set[str] = set()
        loose: dict[str, float] = {}  # Latin words met only inside multi-word phrases
        for phrase in catalog.keywords.get(name, ()):
            if PERSON_SLOT:
                phrase = _PERSON_PRONOUN.sub(PERSON_TERM, phrase[:MAX_ID_CHARS])
            terms = tokens(phrase, words=written)
            latin = tuple(dict.fromkeys(t for t in terms if not has_cjk(t)))
            if len(latin) >= 2:
                phrase_term = _PHRASE_TERM + " ".join(latin)
                if phrase_term not in seen:
                    seen.add(phrase_term)
                    tf[phrase_term] = KEYWORD_WEIGHT * PHRASE_WEIGHT
                    phrases[phrase_term] = latin
                for term in latin:
                    if term != PERSON_TERM:
                        loose[term] = KEYWORD_WEIGHT * PHRASE_PART_WEIGHT
                terms = [t for t in terms if has_cjk(t)]
            for term in terms:
                if term not in seen:
                    seen.add(term)
                    scale = CJK_BIGRAM_WEIGHT if has_cjk(term) else 1.0
                    tf[term] = tf.get(term, 0.0) + KEYWORD_WEIGHT * scale
            for word in cjk_words(phrase):
                if _WORD_TERM + word not in seen:
                    seen.add(_WORD_TERM + word)
                    tf[_WORD_TERM + word] = KEYWORD_WEIGHT * CJK_WORD_WEIGHT
        for term, weight in loose.items():
            if term not in seen:  # a one-word keyword elsewhere counts in full
                tf[term] = tf.get(term, 0.0) + weight
        # A description counts each of its terms once: repeating a word adds nothing. The
        # host's parameter words (names, enum values) count like description words, weaker.
        desc = dict.fromkeys(tokens(_links_as_url(description), words=written), DESCRIPTION_WEIGHT)
        if position < len(params) and params[position]:
            for term in dict.fromkeys(tokens(_links_as_url(params[position]), words=written)):
                desc.setdefault(term, PARAMETER_WEIGHT)
        for term, weight in desc.items():
            tf[term] = tf.get(term, 0.0) + weight
        tf_per_tool.append(tf)
        desc_per_tool.append(desc)
        if product_words and not catalog.keywords.get(name):
            # an MCP server is named after its product, its tools after what they do
            # ("maps_distance_matrix" is not the Matrix chat network)
            server = name.split(FAMILY_SEPARATOR, 1)[0] if FAMILY_SEPARATOR in name else None
            product_terms = name_terms if server is None else tokens(server[:MAX_ID_CHARS])
            implied.append((position, products_in(product_words, product_terms)))
    kinds = _add_product_words(names, tf_per_tool, desc_per_tool, implied) if implied else {}
    # Length normalisation per script: a tool's Chinese/Japanese/Korean keywords do not make it
    # "longer" for an English query, nor its English text for a CJK one (adding words in one
    # language leaves every other language's ranking as it was).
    lengths = {"latin": [0.0] * len(tf_per_tool), "cjk": [0.0] * len(tf_per_tool)}
    for i, tf in enumerate(tf_per_tool):
        for term, freq in tf.items():
            if not _is_phrase(term):  # a phrase adds evidence, not length
                lengths[_script(term)][i] += freq
    avg = {s: (sum(v) / len(v) if v and sum(v) else 1.0) for s, v in lengths.items()}
    postings: dict[str, list[tuple[int, float]]] = {}
    for i, tf in enumerate(tf_per_tool):
        for term, freq in tf.items():
            postings.setdefault(term, []).append((i, freq))
    n = len(names)
    weights: dict[str, tuple[tuple[int, float, float], ...]] = {}
    for term, plist in postings.items():
        idf = math.log(1.0 + (n - len(plist) + 0.5) / (len(plist) + 0.5))
        length, mean = lengths[_script(term)], avg[_script(term)]
        rows = []
        for i, f in plist:
            w = idf * f * (K1 + 1) / (f + K1 * (1 - B + B * length[i] / mean))
            rows.append((i, w, w * desc_per_tool[i].get(term, 0.0) / f if f else 0.0))
        weights[term] = tuple(rows)
    words = tuple(t[len(_WORD_TERM) :] for t in weights if t.startswith(_WORD_TERM))
    shared: dict[str, int] = {}  # word -> how many phrases it is in
    for parts in phrases.values():
        for part in set(parts):
            shared[part] = shared.get(part, 0) + 1
    anchored: dict[str, list[tuple[str, tuple[str, ...], int]]] = {}
    for place, (phrase, parts) in enumerate(phrases.items()):
        anchor = min(parts, key=lambda part: (shared[part], part))
        anchored.setdefault(anchor, []).append((phrase, parts, place))
    phrase_index = {word: tuple(found) for word, found in anchored.items()}
    split = {
        term: (
            tuple((i, w - wd) for i, w, wd in rows if w - wd),
            tuple((i, wd) for i, _, wd in rows if wd),
        )
        for term, rows in weights.items()
    }
    bare = frozenset(i for i, name in enumerate(names) if not catalog.keywords.get(name))
    # mixed: catalogued tools beside an MCP server's tools without keywords (a host control
    # such as tool_search, alone without keywords, does not make the default surface mixed)
    mixed = len(bare) < len(names) and any(FAMILY_SEPARATOR in names[i] for i in bare)
    bare_vocab = (
        frozenset(t for t, rows in weights.items() if any(row[0] in bare for row in rows))
        if mixed
        else None
    )
    tables = (synonyms() if SYNONYMS else None, related() if RELATED else None)
    if REAL_WORDS:
        english_words()  # read once here (with `proper_names`), off the turn's path
    # a synonym, a related word (or a bare entity's term) stands in for a lexicon: it scores
    # only the tools without catalog keywords
    stand_ins = frozenset().union(_BARE_ENTITY_TERMS, *(t.targets for t in tables if t))
    if bare:
        for term in stand_ins & split.keys():
            named, described = split[term]
            kept = (
                tuple(row for row in named if row[0] in bare),
                tuple(row for row in described if row[0] in bare),
            )
            if kept[0] or kept[1]:
                split[_SYNONYM_TERM + term] = kept
    families = _families(names)
    return _Index(
        names,
        weights,
        _deletion_index((term, term) for term in weights),
        words,
        key,
        phrase_index,
        Markers.of(catalog.markers),
        families,
        _successors(tools),
        _deletion_index((word, term) for word, term in written.items() if term in weights),
        _lookup_of(names, catalog),
        split,
        frozenset(shared),
        len(split) > len(weights),
        bare_vocab,
        _entries(tools, params, families) if ENTRY_TOOLS else (),
        Markers.of(catalog.topical) if TOPICAL else None,
        kinds if KIND_PICKS else {},
        _producers(tools, params) if PRODUCERS else {},
        frozenset(range(len(names))) - bare,
        tuple(name_words),
        _implied_of(names, catalog) if IMPLIED else None,
    )


def _add_product_words(
    names: Sequence[str],
    tf_per_tool: list[dict[str, float]],
    desc_per_tool: list[dict[str, float]],
    implied: Sequence[tuple[int, Sequence[str]]],
) -> dict[str, tuple[int, ...]]:
    """Give each tool the words of the product its name holds that its server lacks: a word
    already in the text of any tool of the same server (the name before `FAMILY_SEPARATOR`;
    a tool without one is its own server) adds nothing, so a product's words fill a server's
    missing vocabulary ("table" for ``postgres__query``) instead of spreading a word one
    sibling has over all of them. Returns the words added to an MCP server's tools -> those
    tools (`_Index.kinds`)."""
    family = [name.split(FAMILY_SEPARATOR, 1)[0] for name in names]  # no separator: the name
    said: dict[str, set[str]] = {}
    for i, server in enumerate(family):
        said.setdefault(server, set()).update(tf_per_tool[i])
    added: dict[str, list[int]] = {}
    for i, words in implied:
        for term in words:
            if term not in said[family[i]]:
                desc_per_tool[i][term] = DESCRIPTION_WEIGHT * PRODUCT_WEIGHT
                tf_per_tool[i][term] = DESCRIPTION_WEIGHT * PRODUCT_WEIGHT
                if FAMILY_SEPARATOR in names[i]:
                    added.setdefault(term, []).append(i)
    return {term: tuple(members) for term, members in added.items()}


def _links_as_url(text: str) -> str:
    """`text` with every link replaced by the word "url" (`TOOL_LINKS_AS_URL`)."""
    if not TOOL_LINKS_AS_URL or ("://" not in text and "www." not in text.lower()):
        return text
    return _SCHEME_LINK.sub(" url ", text)


def _implied_of(names: Sequence[str], catalog: EffectiveCatalog) -> _Implied | None:
    """The candidates' implied phrases (`CatalogFile.implied`), or None when none has any:
    each phrase read once (`Markers.of`), its key shared by every candidate that lists it."""
    if not catalog.implied:
        return None
    tools: dict[str | tuple[str, ...], list[int]] = {}
    for i, name in enumerate(names):
        one = Markers.of(catalog.implied.get(name, ()))
        if one is None:
            continue
        keys: list[str | tuple[str, ...]] = [*one.cjk]
        keys.extend(seq for seqs in one.latin.values() for seq in seqs)
        for key in keys:
            tools.setdefault(key, []).append(i)
    if not tools:
        return None
    latin: dict[str, list[tuple[str, ...]]] = {}
    for key in tools:
        if isinstance(key, tuple):
            latin.setdefault(key[0], []).append(key)  # a Latin marker's first term (`Markers`)
    cjk = tuple(key for key in tools if isinstance(key, str))
    markers = Markers({k: tuple(v) for k, v in latin.items()}, cjk)
    return _Implied(markers, {k: tuple(dict.fromkeys(v)) for k, v in tools.items()})


def _lookup_of(
    names: Sequence[str], catalog: EffectiveCatalog
) -> tuple[tuple[int, ...], Markers | None, Markers | None]:
    spec = catalog.lookup
    wanted = set(spec.tools)
    members = tuple(i for i, name in enumerate(names) if name in wanted)
    if not members or not spec.ask or not spec.current:
        return ((), None, None)
    return (members, Markers.of(spec.ask), Markers.of(spec.current))


def _successors(tools: Sequence[tuple[str, str]]) -> tuple[tuple[int, int], ...]:
    """Deprecated tools and their replacements: a description that says "deprecated" and names
    another candidate ("DEPRECATED: Use read_text_file instead."), by its whole name or, within
    an MCP server's family, by the server's own name for it. The first candidate named wins."""
    by_name: dict[str, int] = {}
    by_local: dict[tuple[str, str], int] = {}
    for i, (name, _) in enumerate(tools):
        by_name.setdefault(name, i)
        server, sep, local = name.partition(FAMILY_SEPARATOR)
        if sep and server and local:
            by_local.setdefault((server, local), i)
    pairs = []
    for i, (name, description) in enumerate(tools):
        found = _DEPRECATED.search(description)
        if found is None:
            continue
        server = name.partition(FAMILY_SEPARATOR)[0] if FAMILY_SEPARATOR in name else ""
        for word in _IDENTIFIER.findall(description[found.end() :]):
            j = by_name.get(word)
            if j is None and server:
                j = by_local.get((server, word))
            if j is not None and j != i:
                pairs.append((i, j))
                break
    return tuple(pairs)


def _families(names: Sequence[str]) -> tuple[tuple[tuple[str, ...], tuple[int, ...]], ...]:
    """Families of tools named ``<server>__<tool>`` (OpenClaw's MCP tools), a one-tool server's
    too: "use sequential thinking" names the sequential-thinking server, whose only tool is
    ``sequentialthinking``."""
    members: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        server, sep, rest = name.partition(FAMILY_SEPARATOR)
        if sep and server and rest:
            members.setdefault(server, []).append(i)
    out = []
    for server, idx in members.items():
        terms = tuple(dict.fromkeys(tokens(server)))
        if terms:
            out.append((terms, tuple(idx)))
    return tuple(out)


_WORD_RUN = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def _takes_id(words: str) -> bool:
    """Whether a tool's parameter words name an identifier (``page_id``, ``projectId``). A
    word at a time (one linear scan; a pattern that looks for the suffix from every letter
    is quadratic in a hostile 1,500-character word)."""
    return any(len(word) > 3 and word.endswith(("_id", "Id")) for word in _WORD_RUN.findall(words))


_ID_WORD = re.compile(
    r"(?<![\w-])(?:[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)*(?:Ref|Id|ID|Key)|[a-z][a-z0-9]*_(?:ref|id|key))"
    r"(?![\w-])"
)
"""A word shaped like an identifier's name: ``conversationRef``, ``sessionKey``, ``page_id``."""
MAX_PRODUCER_WORDS = 8
"""At most this many identifier words of a tool are looked for (bounded work)."""
MAX_PRODUCERS = 2
"""An identifier that more listers say than this is no one's in particular (`_producers`)."""


def _producers(
    tools: Sequence[tuple[str, str]], params: Sequence[str]
) -> dict[int, tuple[int, ...]]:
    """Each tool whose parameter words or description name an identifier (`_ID_WORD`) -> the
    other candidates with a name word "list" or "search" whose description says that identifier
    (`PRODUCERS`). An identifier that more than `MAX_PRODUCERS` such candidates say names no
    one's in particular; a tool's first `MAX_PRODUCER_WORDS` identifiers are looked at."""
    said: dict[str, dict[int, None]] = {}
    for j, (name, description) in enumerate(tools):
        if not {"list", "search"}.intersection(_name_words(name)):
            continue
        for match in _ID_WORD.finditer(description, 0, ENTITY_CHARS):
            said.setdefault(match.group(), {})[j] = None
    listed = {word: tuple(js) for word, js in said.items() if len(js) <= MAX_PRODUCERS}
    if not listed:
        return {}
    out: dict[int, tuple[int, ...]] = {}
    for i, (_, description) in enumerate(tools):
        text = f"{params[i] if i < len(params) else ''} {description}"
        ids = dict.fromkeys(m.group() for m in _ID_WORD.finditer(text, 0, ENTITY_CHARS))
        found = [
            j
            for word in itertools.islice(ids, MAX_PRODUCER_WORDS)
            for j in listed.get(word, ())
            if j != i
        ]
        if found:
            out[i] = tuple(dict.fromkeys(found))
    return out


_URL_PARAMETER = re.compile(r"(?<![\w-])url(?![\w-])", re.IGNORECASE)
_URL_WORD = re.compile(r"\burls?\b", re.IGNORECASE)


_FILL_WORDS = frozenset({"fill", "type"})
_POST_WORDS = frozenset({"post", "send"})
"""A name word of a tool that fills in a form's fields (``fill_form``, ``browser_type``)."""


def _entries(
    tools: Sequence[tuple[str, str]],
    params: Sequence[str],
    families: Sequence[tuple[tuple[str, ...], tuple[int, ...]]],
) -> tuple[_Entry, ...]:
    """The entry tools of each tool family (an MCP server's ``<server>__<tool>``): its search
    tools, and its tools that take a URL and say so in their description ("Navigate to a
    URL"; not one with a link among its options), from the tools' names, descriptions and the
    host's parameter words (`ENTRY_TOOLS`); from the names alone, the click tool that submits
    what its fill tools fill in (`FORM_SUBMIT`) and its general reader (`SERVER_READER`).
    Families of one tool and families with none of them are left out."""
    names = [name for name, _ in tools]
    out = []
    for _, members in families:
        if len(members) < 2:
            continue
        local = {i: tokens(names[i].partition(FAMILY_SEPARATOR)[2]) for i in members}
        takes_id = frozenset(i for i in members if i < len(params) and _takes_id(params[i]))
        search = tuple(i for i in members if i not in takes_id and "search" in local[i])
        takes_url = tuple(
            i
            for i in members
            if i < len(params)
            and _URL_PARAMETER.search(params[i])
            and _URL_WORD.search(tools[i][1], 0, ENTITY_CHARS)
        )
        # the click tool with the fewest name words ("click", not "double_click")
        click = min(
            (i for i in members if "click" in local[i]), key=lambda i: len(local[i]), default=None
        )
        fills = frozenset(
            () if click is None else (i for i in members if not _FILL_WORDS.isdisjoint(local[i]))
        )
        reader = _reader(names, members) if SERVER_READER else ()
        listers = _listers(names, members) if LISTERS else {}
        # the post tool with the fewest name words ("post_message", not "post_message_reply")
        post = min(
            (i for i in members if "messag" in local[i] and not _POST_WORDS.isdisjoint(local[i])),
            key=lambda i: len(local[i]),
            default=None,
        )
        posts = (post,) if CHANNEL_POST and post is not None else ()
        if (search and takes_id) or takes_url or fills or reader or listers or posts:
            out.append(
                _Entry(
                    frozenset(members),
                    search if takes_id else (),
                    takes_id,
                    takes_url,
                    fills,
                    (click,) if fills and click is not None else (),
                    reader,
                    listers,
                    posts,
                )
            )
    return tuple(out)


_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
"""A word of a tool's name as written (``kubectl_get``, ``getItems``, ``API-get-self``)."""


def _name_words(name: str) -> list[str]:
    """The lower-cased words (`_NAME_WORD`) of a tool's own name: a family member's after
    ``<server>__``, any other's whole (its first 64 characters)."""
    own = name.partition(FAMILY_SEPARATOR)[2] or name
    return [w.lower() for w in _NAME_WORD.findall(own[:64])]


_READ_VERBS = frozenset({"get", "list"})
READER_PREFIX_TOOLS = 3
"""A name's first word is the server's naming prefix when this many of its tools start with it."""


_ACTS_ON_ONE = frozenset(
    {"get", "read", "retrieve", "fetch", "describe", "update", "edit", "patch", "delete", "remove"}
)
"""A tool name's first word for an action on one existing thing, which has to be found
first (`_listers`)."""


def _listers(names: Sequence[str], members: Sequence[int]) -> dict[int, int]:
    """A family's tools named ``<verb>_<thing>`` with a verb of `_ACTS_ON_ONE` -> its tool
    named ``list_<things>`` (the same words after the verb, compared as stems:
    ``get_console_message`` -> ``list_console_messages``)."""
    things: dict[int, tuple[str, ...]] = {}
    verbs: dict[int, str] = {}
    for i in members:
        words = _name_words(names[i])
        if len(words) >= 2:
            verbs[i] = words[0]
            things[i] = tuple(map(stem, words[1:]))
    lists = {things[i]: i for i in things if verbs[i] == "list"}
    return {i: lists[things[i]] for i in things if verbs[i] in _ACTS_ON_ONE and things[i] in lists}


def _reader(names: Sequence[str], members: Sequence[int]) -> tuple[int, ...]:
    """A family's general reader (`SERVER_READER`): its tool named ``get`` or ``list``, or
    ``<prefix>_get``/``<prefix>_list`` where the prefix starts the names of at least
    `READER_PREFIX_TOOLS` of its tools (``kubectl_get``; not ``issue_list``, whose first word
    names a thing). The first such tool in the host's order; none when there is none."""
    words = {i: _name_words(names[i]) for i in members}
    firsts = collections.Counter(ws[0] for ws in words.values() if ws)
    for i in members:
        ws = words[i]
        if ws and ws[-1] in _READ_VERBS:
            if len(ws) == 1:
                return (i,)
            if len(ws) == 2 and ws[0] not in _READ_VERBS and firsts[ws[0]] >= READER_PREFIX_TOOLS:
                return (i,)
    return ()


def _entry_picks(
    index: _Index, chosen: Sequence[str], scores: Sequence[float], link: bool, channel: bool = False
) -> list[str]:
    """The entry tools a turn's picks need (`ENTRY_TOOLS`): for each family with a picked
    tool, its best-scored search tool when a picked tool of it takes an identifier (unless a
    search tool is picked), its general reader (`SERVER_READER`), its click tool when a picked
    tool of it fills in a form (`FORM_SUBMIT`), the lister of the things a picked tool of it
    acts on one at a time (`LISTERS`), and its tools that take a URL when the prompt holds a
    link. Before them, the candidates that list an identifier a picked tool takes
    (`PRODUCERS`)."""
    positions = index.positions
    picked = {positions[name] for name in chosen if name in positions}
    out = [
        index.names[j]
        for i in sorted(picked & index.producers.keys())
        for j in index.producers[i]
        if j not in picked
    ]
    for entry in index.entries:
        mine = picked & entry.members
        if not mine:
            continue
        if entry.search and mine & entry.takes_id and mine.isdisjoint(entry.search):
            best = max(entry.search, key=lambda i: (scores[i], -i))
            out.append(index.names[best])
        if entry.reader and mine.isdisjoint(entry.reader):
            # every picked server's general reader (`SERVER_READER`)
            out.append(index.names[entry.reader[0]])
        if FORM_SUBMIT and entry.click and mine & entry.fills and mine.isdisjoint(entry.click):
            out.append(index.names[entry.click[0]])
        out.extend(
            index.names[entry.listers[i]]
            for i in sorted(mine & entry.listers.keys())
            if entry.listers[i] not in picked
        )
        if channel and entry.posts and mine.isdisjoint(entry.posts):
            out.append(index.names[entry.posts[0]])
        if link:
            # every way the server opens a link ("navigate_page" and "new_page"): which one
            # the task wants is the model's choice
            out.extend(index.names[i] for i in entry.takes_url[:ENTRY_URL_TOOLS] if i not in mine)
    return list(dict.fromkeys(out))


def one_edit(a: str, b: str) -> bool:
    """True when `b` is `a` with one character inserted, deleted, substituted, or two
    neighbours swapped (Damerau distance 1)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        i, j = diff[0], diff[-1]
        return len(diff) == 2 and j == i + 1 and a[i] == b[j] and a[j] == b[i]
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k in range(len(short)) if short[k] != long_[k]), len(short))
    return short[i:] == long_[i + 1 :]


def _deletion_index(
    forms: Iterable[tuple[str, str]],
) -> dict[str, tuple[tuple[str, str], ...]]:
    """(form, its term) pairs -> {one-deletion variant of a form: ((form, term), ...)}, for the
    forms typo matching looks at (`_typo_term`): the vocabulary's terms, or the candidates'
    words as written."""
    out: dict[str, list[tuple[str, str]]] = {}
    for form, term in forms:
        if _typo_term(form, MIN_TYPO_LENGTH):
            for variant in _deletions(form) | {form}:
                out.setdefault(variant, []).append((form, term))
    return {k: tuple(v) for k, v in out.items()}


def _near(
    deletes: Mapping[str, tuple[tuple[str, str], ...]],
    form: str,
    also: Mapping[str, tuple[tuple[str, str], ...]] | None = None,
) -> set[str]:
    """The terms of the indexed forms one edit (insert, delete, substitute, swap) from `form`:
    "remnd" -> remind as stems, "postgress" -> postgres -> "postgr" as written. `also`: a
    second deletion index looked up with the same variants (the term and its written form are
    often the same string).

    The deletion index proposes candidates (a deletion on both sides can also pair words two
    edits apart, e.g. "remnd" and "rendu"); `one_edit` keeps only the true one-edit ones."""
    if not _typo_term(form, MIN_QUERY_TYPO_LENGTH):
        return set()
    found: set[tuple[str, str]] = set()
    for variant in _deletions(form) | {form}:
        found.update(deletes.get(variant, ()))
        if also is not None:
            found.update(also.get(variant, ()))
    return {term for known, term in found if one_edit(form, known)}


def _phrases_in(index: _Index, words: Sequence[str]) -> list[str]:
    """The multi-word keyword phrases whose words all occur close together in `words`: first
    the phrases with the earliest first-seen word, then in their order among all phrases."""
    positions: dict[str, list[int]] = {}
    for i, word in enumerate(words):
        if word in index.phrase_words:
            positions.setdefault(word, []).append(i)
    seen = {word: k for k, word in enumerate(positions)}
    found: list[tuple[int, int, str]] = []
    for word in positions:
        for phrase, parts, place in index.phrases.get(word, ()):
            if all(p in positions for p in parts) and _close(parts, positions):
                found.append((min(map(seen.__getitem__, parts)), place, phrase))
    return [phrase for _, _, phrase in sorted(found)]


def _with_persons(index: _Index, text: str, lang: str, words: list[str]) -> list[str]:
    """`words` read again with each person pronoun and each name (`_PERSON_NAME`, a word no
    candidate's text holds) of the first `ENTITY_CHARS` characters as `PERSON_TERM`; `words`
    itself when the text has neither there."""
    head = text[:ENTITY_CHARS]

    def name(match: re.Match[str]) -> str:
        before = head[max(0, match.start() - 16) : match.start()].split()
        if before and before[-1].lower() in _PLACE_WORDS:
            return match.group()
        term = tokens(match.group())
        if len(term) == 1 and term[0] not in index.weights and term[0] not in index.phrase_words:
            return PERSON_TERM
        return match.group()

    slotted = _PERSON_PRONOUN.sub(PERSON_TERM, head)
    roles = person_roles() if lang == "en" else None
    if roles is not None:
        slotted = roles.sub(PERSON_TERM, slotted)
    if lang != "de":  # German writes every noun capitalised
        slotted = _PERSON_NAME.sub(name, slotted)
    if slotted == head:
        return words
    return _topic_words(tokens(slotted + text[ENTITY_CHARS:]), lang)


def _topic_words(words: list[str], lang: str) -> list[str]:
    """`words` without the function words of `lang` when it is not English (another
    language's function words are not its topic; `tokens` drops the English ones)."""
    if lang == "en":
        return words
    own = stopwords().get(lang, frozenset())
    return [w for w in words if w not in own]


def _close(parts: Sequence[str], positions: Mapping[str, list[int]]) -> bool:
    """Whether one occurrence of each part falls inside a window of len(parts) + slack."""
    window = len(parts) + PHRASE_SLACK
    for start in positions[parts[0]]:
        lo, hi = start - window, start + window
        if all(any(lo <= i <= hi for i in positions[p]) for p in parts[1:]):
            spots = [start] + [
                min((i for i in positions[p] if lo <= i <= hi), key=lambda i: abs(i - start))
                for p in parts[1:]
            ]
            if max(spots) - min(spots) < window:
                return True
    return False


INDEX_WAIT_S = 30.0
"""How long a caller waits for another caller's build of the same index before building its
own (a turn's deadline ends its wait sooner: the pipeline answers without it)."""


def _index_key(
    tools: tuple[tuple[str, str], ...], catalog: EffectiveCatalog, params: tuple[str, ...]
) -> tuple[str, int]:
    """The offline index cache's key: (catalog fingerprint, candidate-set hash)."""
    return (catalog.fingerprint, hash((tools, params)))


class ConversationReader(Protocol):
    """A conversation head as the classifier asks it: the semantic extra's (`SemanticScorer`)
    or the lexical one (`NgramConversation`)."""

    def conversation(self, prompt: str) -> float | None: ...

    def conversation_bar(self) -> float: ...


class BothHeads:
    """The semantic extra's conversation head and the lexical one read together: the mean of
    their log-odds, against a bar chosen on both heads' cross-validated probabilities
    (``benchmark/train-conversation.py``). On unseen utterances the two together recognise more
    conversation at fewer tasks lost than either alone (``benchmark/results/heads-unseen.md``):
    the embedding reads meaning, the n-grams read phrasing."""

    def __init__(self, semantic: SemanticScorer, lexical: ConversationReader, bar: float) -> None:
        self.semantic = semantic
        self.lexical = lexical
        self.bar = bar

    def read(self, short: str, whole: str) -> float | None:
        """p(conversation) from the semantic head on `short` (the prompt without its
        conversation clauses) and the lexical head on `whole` (the prompt as it was trained);
        None when either has none (a prompt longer than the lexical head judges; the model not
        loaded): the classifier then asks the heads one by one. The lexical head is asked
        first, so a prompt it does not judge is not embedded here."""
        lexical = self.lexical.conversation(whole)
        if lexical is None:
            return None
        semantic = self.semantic.conversation(short)
        if semantic is None:
            return None
        return log_odds_mean(semantic, lexical)

    def conversation(self, text: str) -> float | None:
        return self.read(text, text)

    def conversation_bar(self) -> float:
        return self.bar


def log_odds_mean(a: float, b: float) -> float:
    """The sigmoid of the mean of two probabilities' log-odds (each clipped to 1e-6 from 0 and
    1)."""

    def logit(p: float) -> float:
        p = min(1.0 - 1e-6, max(1e-6, p))
        return math.log(p / (1.0 - p))

    return 1.0 / (1.0 + math.exp(-(logit(a) + logit(b)) / 2.0))


WARM_PROBES = (
    "thanks! now look up the weather in Paris tomorrow, then email it to bob@example.com and "
    "remind me at 9:30 about https://example.com/notes.txt (teh draft)",
    "¿puedes buscar vuelos baratos a Tokio y enviármelos por correo?",
    "帮我查一下明天上海会不会下雨，然后提醒我带伞",
    "明日の東京の天気を調べて、メールで送って",
    "내일 서울 날씨 알려주고 엄마한테 메시지 보내줘",
)
"""Turns the warm-up classifies on a new surface (`OfflineClassifier.warm`) and throws away.
Parts of the index and of the shipped tables are built on the first turn that needs them:
the first Chinese, Japanese or Korean turn after a warm-up took 6-8 ms more than the next
(54 tools; 8 ms on 268). These touch each script, several clauses, a conversation marker,
an address, a link, a time and a typo, on the lexical path (the semantic extra's model is
warm once the build has embedded the surface). A turn's answer does not depend on them."""
WARM_PROBE_TIMEOUT_S = 5.0
"""Each probe's budget (`ClassifyInput.timeout_s`)."""


class OfflineClassifier:
    """BM25F-style lexical classifier over names, keywords and descriptions."""

    name = "offline"

    def __init__(
        self,
        *,
        max_indexes: int = 8,
        semantic: SemanticScorer | None = None,
        conversation: ConversationReader | None = None,
        tool_head: bool = False,
    ) -> None:
        self._indexes: OrderedDict[tuple[str, int], _Index] = OrderedDict()
        self._max_indexes = max_indexes
        self._lock = threading.Lock()
        self._building: dict[tuple[str, int], threading.Event] = {}
        """Indexes being built now: a second caller for the same key waits for the first (a
        turn that arrives while the sidecar warms its surface does not build it a second time
        beside the warm-up, doubling the CPU the first turn waits for)."""
        self.semantic = semantic
        """The optional semantic extra (None: lexical only)."""
        self._phrases: OrderedDict[tuple[str, int], _Phrases] = OrderedDict()
        """Per surface (an index's key): its catalog phrases (`_catalog_phrases`), the last
        `max_indexes`."""
        self.conversation = conversation
        """The lexical conversation head, read when the semantic one is off or missing (None:
        no lexical head)."""
        self.tool_head = tool_head
        """Whether the shipped tool head (`resolver._tool_head`) adds the tools it reads in a
        turn with a signal, on a surface of the tools it knows."""

    def warm(
        self,
        tools: tuple[tuple[str, str], ...],
        catalog: EffectiveCatalog,
        params: tuple[str, ...] = (),
    ) -> None:
        """Build (and cache) the index for a candidate set now, off the turn's path, and load
        the shipped tables every turn reads (the glossary, the lexical head): a turn that
        arrives meanwhile waits for these builds rather than running its own beside them.
        Then classify `WARM_PROBES` on it, so that what the index and the tables build on
        first use (a script's first-character tables, typo variants) is built here too."""
        if GLOSSARY:
            glossary()
        index = self._index_for(tools, catalog, params)
        if self.semantic is not None:
            self.semantic.build(index.key, _passages(tools, catalog))
            if PHRASE_PICK_SIM < 1.0:
                phrases = self._phrase_set(index, catalog)
                if phrases.texts:
                    self.semantic.build(phrases.key, phrases.texts, queries=True)
        if isinstance(self.conversation, NgramConversation):
            self.conversation.warm()
        if self.tool_head:
            tool_head()
        # lexical only: the semantic extra's model is warm from the build, and a probe's
        # queries would cost it an embedding each
        lexical = copy.copy(self)
        lexical.semantic = None
        for probe in WARM_PROBES:
            lexical.classify_sync(
                ClassifyInput(
                    prompt=probe,
                    messages=(),
                    tools=tools,
                    skills=catalog.skills,
                    catalog=catalog,
                    timeout_s=WARM_PROBE_TIMEOUT_S,
                    params=params,
                )
            )

    def _index(self, request: ClassifyInput) -> _Index:
        return self._index_for(request.tools, request.catalog, request.params)

    def build_index(self, request: ClassifyInput) -> None:
        """Build (and keep) the index for the request's candidates now, if it is not built."""
        self._index(request)

    def builds_running(self) -> int:
        """How many indexes are being built now."""
        with self._lock:
            return len(self._building)

    def index_count(self) -> int:
        """How many candidate sets' indexes are built and kept."""
        with self._lock:
            return len(self._indexes)

    def has_index(self, request: ClassifyInput) -> bool:
        """Whether the index for the request's candidates is built (a turn need not build it)."""
        key = _index_key(request.tools, request.catalog, request.params)
        with self._lock:
            return key in self._indexes

    def _index_for(
        self,
        tools: tuple[tuple[str, str], ...],
        catalog: EffectiveCatalog,
        params: tuple[str, ...] = (),
    ) -> _Index:
        key = _index_key(tools, catalog, params)
        with self._lock:
            index = self._indexes.get(key)
            if index is not None:
                self._indexes.move_to_end(key)
                return index
            running = self._building.get(key)
            if running is None:
                self._building[key] = threading.Event()
        if running is not None:
            running.wait(INDEX_WAIT_S)
            with self._lock:
                index = self._indexes.get(key)
            if index is not None:
                return index
            # the other build failed or is slow: build it here (nothing shared is changed)
            return _build_index(tools, catalog, key, params)
        try:
            index = _build_index(tools, catalog, key, params)
            with self._lock:
                self._indexes[key] = index
                while len(self._indexes) > self._max_indexes:
                    self._indexes.popitem(last=False)
            return index
        finally:
            with self._lock:
                self._building.pop(key).set()

    def _query(
        self,
        index: _Index,
        text: str,
        weight: float = 1.0,
        typos: dict[tuple[str, str], list[str]] | None = None,
        entities: dict[str, str] | None = None,
    ) -> dict[str, float]:
        """The query terms of `text` at `weight`. `typos`: a turn's typo matches so far (the
        whole prompt's words come back in its clauses). `entities`, when given, receives the
        query term of each kind of value found in `text` -> its `_ENTITIES` term."""
        query: dict[str, float] = {}
        cjk = has_cjk(text)
        stops = _cjk_stopwords() if cjk and CJK_STOPWORDS else frozenset()
        if index.cjk_words and cjk:
            folded = fold(text)
            for k in index.cjk_first.candidates(folded):
                word = index.cjk_words[k]
                if word in stops:
                    continue
                if word in folded and find_word(folded, word) >= 0:  # `in`: a cheap first test
                    query[_WORD_TERM + word] = query.get(_WORD_TERM + word, 0.0) + weight
        if HOW_LONG:
            text = _HOW_LONG.sub("how duration", text)
        if CLOSE_TO:
            text = _CLOSE_TO.sub("near", text)
        written: dict[str, str] = {}  # the prompt's words as typed -> their terms
        every: list[str] = []  # with the function words, which tell the language
        words = tokens(text, words=written, every=every)
        lang = latin_language(every, hints=letter_hits(text)) if words else "en"
        words = _topic_words(words, lang)
        if stops:
            words = [w for w in words if w not in stops and not _KANA_PAIR.fullmatch(w)]
        typed: dict[str, str] = {}
        # a correctly spelt English word or a proper name written capitalised is no typo
        # (`REAL_WORDS`); the text's capitalised words are read once, when a name first asks
        real, names = (english_words(), proper_names()) if REAL_WORDS else ((), ())
        capitalised: frozenset[str] | None = None
        for term in words:
            if term in index.weights:
                query[term] = query.get(term, 0.0) + weight
                continue
            if lang != "en":
                continue  # typo matching reads hasty English, not another language
            if SPELLINGS:
                typed = typed or {t: w for w, t in reversed(written.items())}
            key = (term, typed.get(term, ""))
            word = key[1] or term
            if word in real:
                continue
            if word in names:
                if capitalised is None:
                    capitalised = frozenset(m.group().lower() for m in _CAPITALISED.finditer(text))
                if word in capitalised:
                    continue
            found = typos.get(key) if typos is not None else None
            if found is None:
                if SPELLINGS and key[1] == term:
                    near = _near(index.deletes, term, also=index.spellings)
                else:
                    near = _near(index.deletes, term)
                    if SPELLINGS:
                        near |= _near(index.spellings, key[1])
                found = sorted(near)
                if typos is not None:
                    typos[key] = found
            for match in found:
                query[match] = query.get(match, 0.0) + weight * TYPO_WEIGHT
        # what a phrase says without the tool's word: read as that word beside it
        # (a day counts only beside the request's other terms: alone it is no request)
        said: set[str] = set()  # one such term a query, however many phrases say it
        for on, pattern, term, share in (
            (CLOCK_TIME, _CLOCK, _SCHEDULE, 1.0),
            (DAY_WORDS and bool(query), _DAY, _SCHEDULE, DAY_WEIGHT),
            (SELF_PLACE, _SELF_PLACE, _LOCATION, 1.0),
            (MY_DEVICE, _MY_DEVICE, _DEVICE_TERM, 1.0),
        ):
            if (
                on
                and term not in said
                and term in index.weights
                and pattern.search(text, 0, ENTITY_CHARS)
            ):
                said.add(term)
                query[term] = query.get(term, 0.0) + weight * share
        if index.has_synonyms and words:
            for table, share_of in (
                (synonyms() if SYNONYMS else None, SYNONYM_WEIGHT),
                (related() if RELATED else None, RELATED_WEIGHT),
            ):
                scale = weight * share_of
                if table is None or scale <= 0.0:
                    continue
                for term, share in table.expand(words, every).items():
                    stand_in = _SYNONYM_TERM + term
                    if stand_in in index.postings and term not in query:
                        query[stand_in] = max(query.get(stand_in, 0.0), scale * share)
        for terms, bare in _entities_in(text):
            for term in terms:
                entity = _SYNONYM_TERM + term if bare else term
                if entity in (index.postings if bare else index.weights):
                    query[entity] = query.get(entity, 0.0) + weight
                    if entities is not None:
                        entities.setdefault(entity, term)
        if index.phrases:
            if PERSON_SLOT and not cjk and PERSON_TERM in index.phrase_words:
                words = _with_persons(index, text, lang, words)
            for phrase in _phrases_in(index, words):
                query[phrase] = query.get(phrase, 0.0) + weight
        return query

    @staticmethod
    def _score(
        index: _Index, query: Mapping[str, float], touched: set[int] | None = None
    ) -> list[float]:
        """BM25F scores; a tool's description adds only its `DESCRIPTION_TERMS` strongest
        query terms (a description that lists every word of the prompt cannot outscore the
        tools whose names and keywords the prompt asks for). `touched`, when given, receives
        every tool the query matched (the others score 0: a caller need not look at them)."""
        scores = [0.0] * len(index.names)
        # A tool's description parts: the first in `single`, a list only once there are two
        # (most tools a common word touches match nothing else: no list, no work for the GC).
        single: dict[int, float] = {}
        described: dict[int, list[float]] = {}
        for term, qweight in query.items():
            plain, desc = index.postings.get(term, _NO_POSTINGS)
            if touched is not None:
                touched.update(map(_TOOL, plain))
            for i, w in plain:
                scores[i] += qweight * w
            for i, wd in desc:
                if i in described:
                    described[i].append(qweight * wd)
                elif i in single:
                    described[i] = [single.pop(i), qweight * wd]
                else:
                    single[i] = qweight * wd
        for i, part in single.items():
            scores[i] += part
        for i, parts in described.items():
            if len(parts) > DESCRIPTION_TERMS:
                parts = sorted(parts, reverse=True)[:DESCRIPTION_TERMS]
            scores[i] += sum(parts)
        if touched is not None:
            touched.update(single, described)
        for old, new in index.successors:
            if scores[old] > 0.0:
                scores[new] = max(scores[new], scores[old])
                scores[old] *= DEPRECATED_SHARE
                if touched is not None:
                    touched.add(new)
        return scores

    def score(self, request: ClassifyInput) -> dict[str, float]:
        """Score every candidate against the prompt (and, damped, the recent user turns)."""
        index = self._index(request)
        return dict(zip(index.names, self._full_scores(index, request), strict=True))

    def _full_scores(self, index: _Index, request: ClassifyInput) -> list[float]:
        return self._scored(index, request)[0]

    def _turn_query(
        self,
        index: _Index,
        request: ClassifyInput,
        prompt: str | None = None,
        own: Mapping[str, float] | None = None,
    ) -> dict[str, float]:
        """The prompt's query terms (of `prompt`, the task part of the request's prompt, when
        given; `own`: its query, already made), plus the last user messages' at
        `HISTORY_WEIGHT`."""
        if own is None:
            own = self._query(index, request.prompt if prompt is None else prompt)
        query = dict(own)
        history = [m.text() for m in request.messages[-4:] if m.role == "user"]
        if not history:
            return query
        weight = HISTORY_WEIGHT
        if HISTORY_DAMP < 1.0 and query:
            scores = self._score(index, query)
            if max(scores, default=0.0) >= WEAK_SCORE:
                weight *= HISTORY_DAMP  # the prompt says what it needs; history matters less
        earlier: dict[str, float] = {}
        for text in history[-2:]:  # a term the history repeats counts once
            for term, w in self._query(index, text, weight).items():
                earlier[term] = max(earlier.get(term, 0.0), w)
        for term, w in earlier.items():
            query[term] = query.get(term, 0.0) + w
        return query

    def _scored(
        self,
        index: _Index,
        request: ClassifyInput,
        query: Mapping[str, float] | None = None,
        task: str | None = None,
    ) -> tuple[list[float], bool]:
        """Per-candidate scores, and whether the semantic extra contributed to them. `task` is
        the prompt without its conversational clauses (default: the whole prompt)."""
        if query is None:
            query = self._turn_query(index, request)
        task = request.prompt if task is None else task
        scores = self._score(index, query)
        fused = False
        if self.semantic is not None and tokens(task):
            # (a prompt with no content words, "thanks, that's all", stays without a signal)
            z = self.semantic.zscores(
                index.key,
                lambda: _passages(request.tools, request.catalog),
                task,
            )
            if z is not None:
                scores, fused = fuse(scores, z), True
        if NAMED_SERVER_OTHERS < 1.0 and index.families:
            _prefer_named(index, _named_families(index, task), query, scores, request.core_tools)
        return scores, fused

    async def classify(self, request: ClassifyInput) -> Classification:
        return self.classify_sync(request)

    def classify_sync(self, request: ClassifyInput) -> Classification:
        """Rank candidates and cut where the score drops off; cover every clause.

        Past the request's budget (`ClassifyInput.timeout_s`) the per-clause rankings stop: the
        turn has answered without this pass by then, and its worker thread should not go on
        taking CPU from the next turns."""
        stop = time.monotonic() + request.timeout_s
        index = self._index(request)
        plain = task_text(
            index.markers, request.prompt, index.topical, self._asks_nothing(index, request)
        )
        # the semantic extra's head: how likely the turn is conversation (no tool needed), and
        # whether that reaches its bar; it reads the clauses a topical marker took too ("thanks
        # for the reminder earlier! can you set another one for tomorrow?" is about a reminder)
        # (without the extra, or when its model is missing, the lexical head reads it)
        p_chat, bar, chat, head, short = None, 1.0, False, None, ""
        lexical = self.conversation if NGRAM_HEAD else None
        readers = [r for r in (self._both_heads(lexical), self.semantic, lexical) if r]
        if readers:
            short = plain if index.topical is None else task_text(index.markers, request.prompt)
        for reader in readers:
            # the lexical head reads the prompt whole, as it was trained: without its
            # conversation clauses, "thanks, you saved my day" reads as a task
            if not short.strip():
                p_chat = None
            elif isinstance(reader, BothHeads):
                p_chat = reader.read(short, request.prompt)
            else:
                p_chat = reader.conversation(request.prompt if reader is lexical else short)
            if p_chat is not None:
                head, bar = reader, reader.conversation_bar()
                chat = p_chat >= bar
                break
        conversation = None if p_chat is None else round(p_chat, 4)
        task = plain
        if GLOSSARY and task.strip():
            # another language's words the candidates' text lacks, followed by their English
            # (for the lexical match only: the multilingual model reads the prompt as written)
            task = gloss(task, lambda word: _known(index, word))
        # the request's own parts: the prompt's terms, not the history's
        typos: dict[tuple[str, str], list[str]] = {}
        found: dict[str, str] = {}  # the values' terms, for `_entity_lists`
        own = self._query(index, task, typos=typos, entities=found) if task.strip() else {}
        query = self._turn_query(index, request, task, own) if task.strip() else {}
        scores, semantic = self._scored(index, request, query, plain)
        sure = (p_chat or 0.0) >= HEAD_SURE_P
        if (
            chat
            and head is not None
            and not (HEAD_YIELDS_TO_NAMES and self._says_task(index, task, own, sure=sure))
            and not (HEAD_YIELDS_TO_UNLISTED and _leads_unlisted(index, scores, request.core_tools))
            and not (
                HEAD_PER_CLAUSE
                and self._clause_asks(
                    [(r, MAX_SEGMENTS if r is lexical else CLAUSE_PICK_MAX) for r in readers],
                    short,
                    min(bar, CLAUSE_TASK_P),
                    stop,
                    self._is_evidence(
                        index, request.core_tools, code=not (HEAD_SURE_IGNORES_CODE and sure)
                    )
                    if CLAUSE_NEEDS_EVIDENCE
                    else None,
                )
            )
        ):
            # ...unless the prompt says a candidate's whole multi-word name or keyword phrase
            # ("what's the definition of the word serendipity" on a surface with a
            # word_definition tool): a request for that tool; or holds a value a tool takes, or
            # names a server; or its best tool is one the catalogs hold no keywords for; or a
            # clause of it is a task alone (read last: it embeds each clause). The history
            # does not count either.
            return Classification(
                selected=(),
                confidence=0.0,
                reasoning=f"conversation: the head's p {p_chat:.2f} >= {bar:.2f}, no tool",
                classifier="offline" if head is lexical else "offline+semantic",
                has_signal=False,
                conversation=conversation,
                chat=True,
            )
        label = "offline+semantic" if semantic else "offline"
        names = index.names
        # best first, ties by name: the scored tools in name order, then one stable sort (no
        # key tuple per scored tool; scores are >= 0)
        by_name = index.by_name
        positive = itertools.compress(by_name, map(scores.__getitem__, by_name))
        ranked = sorted(positive, key=scores.__getitem__, reverse=True)
        top = scores[ranked[0]] if ranked else 0.0
        # core tools are in every surface: they do not set the bar for the others
        core = request.core_tools
        bar = next((scores[i] for i in ranked if names[i] not in core), top)
        rounded = dict(
            zip(
                map(names.__getitem__, ranked),
                map(round, map(scores.__getitem__, ranked), itertools.repeat(4)),
                strict=True,
            )
        )
        if top <= 0.0:
            return Classification(
                selected=(),
                confidence=0.0,
                scores=rounded,
                reasoning="every clause of the prompt is conversation (the catalog's markers)"
                if request.prompt.strip() and not plain.strip()
                else "no catalog term matched the prompt",
                classifier=label,
                has_signal=False,
                conversation=conversation,
            )
        weak = bar < WEAK_SCORE
        cutoff = bar * (WEAK_RELATIVE_CUTOFF if weak else RELATIVE_CUTOFF)
        lists = [[names[i] for i in itertools.takewhile(lambda i: scores[i] >= cutoff, ranked)]]
        lists.append([names[i] for i in _coverage(index, own, bar, frozenset(core))])
        named = _named_families(index, task) if index.families else []
        if FAMILY_PICKS and named:
            lists.extend(_family_lists(index, named, scores))
        kind_lists = _kind_lists(index, own, scores) if KIND_PICKS and index.kinds else []
        lists.extend(kind_lists)
        entity_lists = self._entity_lists(index, found, core) if ENTITY_PICKS else []
        lists.extend(entity_lists)
        lists.extend(self._segment_lists(index, task, typos, named, core, stop=stop))
        clauses = (
            len(lists)
            - 2
            - (len(named) if FAMILY_PICKS else 0)
            - len(kind_lists)
            - len(entity_lists)
        )
        cap = min(MAX_SELECTED_MULTI, max(MAX_SELECTED, PER_CLAUSE * clauses))
        if LOOKUP:
            lists.extend(_lookup_list(index, plain))
        lists.extend(_implied_lists(index, plain))
        near: list[str] = []
        if semantic and CLAUSE_PICK_GAP > 0:
            clause_lists, near = self._clause_picks(index, request, plain)
            lists.extend(clause_lists)
        chosen = _round_robin(lists, cap)
        # a clause's closest catalog phrase only adds: it takes no other tool's place under
        # the cap (at most one a clause)
        chosen += tuple(dict.fromkeys(n for n in near if n not in chosen))
        learnt = self._head_picks(index, plain, chosen, core) if self.tool_head else []
        chosen += tuple(learnt)
        entries: list[str] = []
        if index.entries or index.producers:
            # the prompt's link and channel matter to a server's entry tools only
            link = bool(index.entries) and _link_in(plain)
            channel = (
                bool(index.entries)
                and CHANNEL_POST
                and _CHANNEL.search(plain, 0, ENTITY_CHARS) is not None
            )
            entries = _entry_picks(index, chosen, scores, link, channel)
            chosen += tuple(entries)
        second = scores[ranked[1]] if len(ranked) > 1 else 0.0
        margin = (top - second) / top
        confidence = min(1.0, 0.3 + 0.06 * top + 0.3 * margin)
        return Classification(
            selected=chosen,
            confidence=round(confidence, 3),
            scores=rounded,
            reasoning=f"lexical match; best {names[ranked[0]]} ({top:.2f})"
            + (f"; the tool head adds {', '.join(learnt)}" if learnt else "")
            + (f"; tools the picks need first: {', '.join(entries[:8])}" if entries else ""),
            cutoff=round(cutoff, 4),
            classifier=label,
            conversation=conversation,
        )

    @staticmethod
    def _head_picks(
        index: _Index, text: str, chosen: Sequence[str], core: Collection[str]
    ) -> list[str]:
        """The shipped tool head's picks for the prompt and its clauses: candidates it knows
        that the lexical picks and the core tools lack, in a turn whose lexical picks hold a
        tool beyond the core ones (none on a surface it mostly does not know,
        `resolver._tool_head.MAX_UNKNOWN_SHARE`)."""
        head = tool_head()
        if head is None or not text.strip() or not head.reads(index.names):
            return []
        if all(name in core for name in chosen):
            return []  # picks of core tools only (a memory look-up, a file read): no task for it
        have = set(chosen) | set(core)
        allowed = [n for n in index.names if n not in have]
        return head.picks(head.parts(text, clauses_of(text)), allowed, text)

    def _entity_lists(
        self, index: _Index, found: Mapping[str, str], core: Collection[str]
    ) -> list[list[str]]:
        """Per kind of value the prompt holds (`found`: its query term -> its `_ENTITIES` term,
        as `_query` read them) whose term is in `ENTITY_PICK_TERMS`: the best `ENTITY_PICKS`
        non-core tools for that query term alone, best first, ties to the smaller index."""
        out: list[list[str]] = []
        for entity, term in found.items():
            if term not in ENTITY_PICK_TERMS:
                continue
            touched: set[int] = set()
            scores = self._score(index, {entity: 1.0}, touched)
            best = sorted(
                (i for i in touched if scores[i] > 0.0 and index.names[i] not in core),
                key=lambda i: (-scores[i], i),
            )[:ENTITY_PICKS]
            if best:
                out.append([index.names[i] for i in best])
        return out

    def _both_heads(self, lexical: ConversationReader | None) -> BothHeads | None:
        """The semantic and lexical heads together, when both are on and the semantic head
        holds a bar for this lexical head (`SemanticScorer.pair_bar`)."""
        if self.semantic is None or not isinstance(lexical, NgramConversation):
            return None
        bias = lexical.bias()
        bar = None if bias is None else self.semantic.pair_bar(bias)
        return None if bar is None else BothHeads(self.semantic, lexical, bar)

    @staticmethod
    def _clause_asks(
        readers: Sequence[tuple[ConversationReader, int]],
        text: str,
        below: float,
        stop: float,
        evidence: Callable[[str], bool] | None = None,
    ) -> bool:
        """Whether a clause of `text` is a task to the conversation heads on its own (its
        probability of conversation below `below`; `HEAD_PER_CLAUSE`). Each clause is read by
        the first of `readers` (the heads together, the semantic head, the lexical head: those
        that are on) that reads a text of this many clauses (its limit: the semantic head embeds
        each clause, so with it at most `CLAUSE_PICK_MAX`; the lexical head alone judges only
        texts of `MAX_CHARS`, so its clauses cost a millisecond together and a rambling
        13-clause aside that ends in a request is read whole: `MAX_SEGMENTS`) and has a
        probability for it. A text of one clause is not read again; past the turn's budget
        (`stop`) the rest are not read. With `evidence`, a clause below `below` counts only when
        `evidence` holds for it (`CLAUSE_NEEDS_EVIDENCE`)."""
        parts = clauses_of(text)
        usable = [reader for reader, limit in readers if len(parts) <= limit]
        if len(parts) < 2 or not usable:
            return False
        for part in parts:
            if time.monotonic() > stop:
                return False
            p = next((p for p in (r.conversation(part) for r in usable) if p is not None), None)
            if p is not None and p < below and (evidence is None or evidence(part)):
                return True
        return False

    def _best_other(self, index: _Index, part: str, core: Collection[str]) -> float | None:
        """The best score of a tool but the `core` ones on what `part` says besides its topical
        markers; None: it says a tool's whole name or keyword phrase, or a server's."""
        text, said = without_markers(index.topical or Markers({}, ()), part)
        if GLOSSARY:
            text = gloss(text, lambda word: _known(index, word))
        query = {t: w for t, w in self._query(index, text).items() if t not in said}
        if any(map(_is_phrase, query)) or (
            index.families and _named_families(index, text, single=True)
        ):
            return None
        touched: set[int] = set()
        scores = self._score(index, query, touched)
        names = index.names
        return max((scores[i] for i in touched if names[i] not in core), default=0.0)

    def _is_evidence(
        self, index: _Index, core: Collection[str], *, code: bool = True
    ) -> Callable[[str], bool]:
        """For `_clause_asks`: whether a clause is any evidence for a tool but the `core` ones
        (`_best_other` above 0), holds a value a tool acts on, or says a tool's whole name or
        keyword phrase or a server's name."""

        def is_evidence(part: str) -> bool:
            if _holds_value(part, code=code):
                return True
            score = self._best_other(index, part, core)
            return score is None or score > 0.0

        return is_evidence

    @staticmethod
    def _says_task(
        index: _Index, task: str, own: Mapping[str, float], *, sure: bool = False
    ) -> bool:
        """Whether a prompt the conversation head calls conversation still asks for a tool: it
        says a candidate's whole multi-word name or keyword phrase (a name only when the head
        is `sure`: `HEAD_SURE_P`), or (`HEAD_YIELDS_TO_VALUES`) holds a value a tool acts on
        (`_VALUE`, `_ENTITIES`) or names an MCP server."""
        said = [term for term in own if _is_phrase(term)]
        if said and (not sure or not index.name_phrases.isdisjoint(said)):
            return True
        if any(all(map(own.__contains__, tail)) for tail in index.name_objects):
            return True
        if not HEAD_YIELDS_TO_VALUES:
            return False
        if _holds_value(task, code=not (sure and HEAD_SURE_IGNORES_CODE)):
            return True
        return bool(index.families) and bool(
            _named_families(index, task[:ENTITY_CHARS], single=True)
        )

    def _asks_nothing(self, index: _Index, request: ClassifyInput) -> Callable[[str], bool]:
        """For `task_text`: whether a clause with a topical marker asks for no tool. It does
        not when it holds a value a tool acts on (a link, a path, a file name, a channel, a
        handle, code, SQL: `_ENTITIES`, `_VALUE`), says a tool's whole multi-word name or
        keyword phrase or an MCP server's name, or is evidence of `WEAK_SCORE` or more for a
        tool other than the core ones; nor when a second request follows ("write a haiku about
        autumn and remind me at 9", `clauses_of`): a part after the first that is any evidence
        for such a tool ("the difference between TCP and UDP" has none in "UDP"). At most
        `TOPICAL_CHECKS` clauses a turn, each of at most `TOPICAL_PARTS` parts and
        `ENTITY_CHARS` characters."""
        left = [TOPICAL_CHECKS]
        core = request.core_tools

        def asks_nothing(clause: str) -> bool:
            if left[0] <= 0:
                return False
            left[0] -= 1
            # values are looked for in the first `ENTITY_CHARS`: a longer clause stays a task
            if len(clause) > ENTITY_CHARS or _holds_value(clause):
                return False
            parts = clauses_of(clause)
            if len(parts) > TOPICAL_PARTS:
                return False
            for k, part in enumerate(parts):
                score = self._best_other(index, part, core)
                if score is None or score >= WEAK_SCORE or (k and score > 0.0):
                    return False
            return True

        return asks_nothing

    def _segment_lists(
        self,
        index: _Index,
        prompt: str,
        typos: dict[tuple[str, str], list[str]] | None = None,
        named: Sequence[tuple[int, ...]] = (),
        core: Iterable[str] = (),
        stop: float | None = None,
    ) -> list[list[str]]:
        """Per clause of a multi-part prompt (at most `MAX_SEGMENTS`; none after the monotonic
        time `stop`): its best tools, best first. When the prompt names MCP servers (`named`),
        their tools outrank look-alikes in each clause as in the whole prompt
        (`_prefer_named`)."""
        segments = clauses_of(prompt)
        if len(segments) < 2:
            return []
        if len(segments) > MAX_SEGMENTS:
            half = MAX_SEGMENTS // 2
            segments = segments[:half] + segments[-(MAX_SEGMENTS - half) :]
        lists: list[list[str]] = []
        for segment in segments:
            if stop is not None and time.monotonic() > stop:
                break
            touched: set[int] = set()
            query = self._query(index, segment, typos=typos)
            seg_scores = self._score(index, query, touched)
            if named:
                _prefer_named(index, named, query, seg_scores, core)
            best = max(map(seg_scores.__getitem__, touched), default=0.0)
            if best > 0:
                # the clause's best `SEGMENT_PICKS` at or above the floor, best first, ties to
                # the smaller index (as a stable sort of every tool would have them)
                floor = best * SEGMENT_RELATIVE_CUTOFF
                near = sorted(i for i in touched if seg_scores[i] >= floor)
                order = sorted(near, key=seg_scores.__getitem__, reverse=True)[:SEGMENT_PICKS]
                lists.append([index.names[i] for i in order])
        return lists

    def _clause_picks(
        self, index: _Index, request: ClassifyInput, text: str
    ) -> tuple[list[list[str]], list[str]]:
        """Per clause (the first `CLAUSE_PICK_MAX`; a one-clause prompt is its own clause):
        the most similar tool, when the embedding is sure about it (`CLAUSE_PICK_GAP`), each
        a list of its own; and the tool of the closest catalog phrase, when it is close and
        leads (`PHRASE_PICK_SIM`)."""
        semantic = self.semantic
        if semantic is None:
            return [], []
        picks: list[list[str]] = []
        near: list[str] = []
        phrases = self._phrase_set(index, request.catalog) if PHRASE_PICK_SIM < 1.0 else None
        for clause in (clauses_of(text) or [text])[:CLAUSE_PICK_MAX]:
            if not tokens(clause):
                continue
            sims = semantic.similarities(
                index.key, lambda: _passages(request.tools, request.catalog), clause
            )
            if sims is None:
                break  # not ready, fewer than 2 tools, or the model failed: no picks
            first, lead = _best_and_lead(sims)
            if lead >= CLAUSE_PICK_GAP:
                picks.append([index.names[first]])
            if phrases is not None and phrases.texts:
                # the clause's closest catalog phrase (the same query vector, kept by the scorer)
                closeness = semantic.similarities(
                    phrases.key, lambda: phrases.texts, clause, queries=True
                )
                if closeness is not None:
                    best = group_max(closeness, phrases.starts)  # per tool
                    top, lead = _best_and_lead(best)
                    name = index.names[phrases.tools[top]]
                    # (a core tool is in every surface: its pick would only take a place)
                    if (
                        best[top] >= PHRASE_PICK_SIM
                        and lead >= PHRASE_PICK_GAP
                        and name not in request.core_tools
                    ):
                        near.append(name)
        return picks, near

    def _phrase_set(self, index: _Index, catalog: EffectiveCatalog) -> _Phrases:
        """The surface's catalog phrases (`_catalog_phrases`), made once per index."""
        with self._lock:
            phrases = self._phrases.get(index.key)
            if phrases is not None:
                self._phrases.move_to_end(index.key)
                return phrases
        phrases = _catalog_phrases(index, catalog)
        with self._lock:
            self._phrases[index.key] = phrases
            while len(self._phrases) > self._max_indexes:
                self._phrases.popitem(last=False)
        return phrases


_KANA_PAIR = re.compile("[\u3041-\u309f]{2}")
"""Two hiragana: in Japanese the particles and inflections between the words ("って",
"いて", "った", "ない"); a keyword word in hiragana still matches whole. (A particle beside a
word's character, "ンで", was tried too: it also dropped "に送" of "グループに送って", a bigram
the message tool's "彼に送って" shares, and lost that turn.)"""


@built_once
def _cjk_stopwords() -> frozenset[str]:
    """The function words of the CJK languages in `catalogs/language.json`, folded."""
    lists = stopwords()
    return frozenset(w for lang in ("zh", "ja", "ko") for w in lists.get(lang, ()) if has_cjk(w))


def _leads_unlisted(index: _Index, scores: Sequence[float], core: Collection[str]) -> bool:
    """Whether the best-scoring tool but the core ones has no catalog keywords
    (`HEAD_YIELDS_TO_UNLISTED`)."""
    names = index.names
    best, top = -1, 0.0
    for i, score in enumerate(scores):
        if score > top and names[i] not in core:
            best, top = i, score
    return best >= 0 and best not in index.listed


def _is_phrase(term: str) -> bool:
    """Whether a query term is a multi-word name or keyword phrase (all its words said)."""
    return term.startswith(_PHRASE_TERM)


def _lookup_list(index: _Index, text: str) -> list[list[str]]:
    """The look-up tools, when a clause of the prompt asks about the current state of the world:
    it has an ask cue ("what time", "查一下", "wann") and a current cue ("today", "明天",
    "latest", "price") — "when does the last train leave today?" needs a web search though no
    word names one. Matched on the prompt as written (not its glosses)."""
    members, ask, current = index.lookup
    if not members:
        return []
    if not has_cjk(text):  # a Latin cue found in a clause is found in the whole text too
        terms = tokens(text, keep_stopwords=True)
        if not (has_marker(current, text, terms) and has_marker(ask, text, terms)):
            return []  # most prompts: no need to look at each clause
    for clause in clauses_of(text) or [text]:
        terms = tokens(clause, keep_stopwords=True)
        if has_marker(ask, clause, terms) and has_marker(current, clause, terms):
            return [[index.names[i] for i in members]]
    return []


def _implied_lists(index: _Index, text: str) -> list[list[str]]:
    """A one-tool list per candidate whose implied phrase `text` holds ("can't look at the
    screen" -> the speech tool), in candidate order: each keeps its tool as a clause keeps its
    best. Matched on the prompt as written, as the look-up cues are."""
    implied = index.implied
    if implied is None:
        return []
    found = {i for key in markers_in(implied.markers, text) for i in implied.tools.get(key, ())}
    return [[index.names[i]] for i in sorted(found)]


def clauses_of(prompt: str) -> list[str]:
    """The parts of a multi-part prompt ("..., then ...; also ...", a bare "and").

    A lead-in, a piece that a comma ends and that holds fewer than `LEAD_IN_TERMS` index terms
    ("First, ...", "Finally, ...", "With Playwright, ...", "首先，..."), is no clause of its own:
    it opens the next one. As a clause it would get its own tools from one word ("final",
    a server name alone), taking slots from the request's real parts."""
    pieces: list[str] = []
    start = 0
    lead: list[str] = []  # the lead-ins so far, marks included (joined once, when they end)
    lead_terms = 0  # their index terms (a mark separates words, so the counts add up)
    for mark in _SEGMENT_SPLIT.finditer(prompt):
        segment = prompt[start : mark.start()]
        start = mark.end()
        if _COMMA.fullmatch(mark.group()):
            terms = lead_terms + len(tokens(segment))
            if terms < LEAD_IN_TERMS:
                lead += (segment, mark.group())
                lead_terms = terms
                continue
        pieces.append("".join((*lead, segment)))
        lead, lead_terms = [], 0
    pieces.append("".join((*lead, prompt[start:])))
    parts = [p for piece in pieces if piece for p in _BARE_AND.split(piece)]
    return [s for s in parts if s and len(s.strip()) > 2]


def _named_families(index: _Index, text: str, *, single: bool = False) -> list[tuple[int, ...]]:
    """The families whose server name the text says ("in Notion", "with Google Maps"), also
    mistyped by a letter left out, added or swapped ("on slak", "in notoin"; `SERVER_TYPOS`).
    A one-tool server only with `single`: its name is often a plain word ("fetch", "time"), so
    saying it marks a task (the conversation heads yield) but does not prefer its tool over
    the others that word matches."""
    words = set(tokens(text))
    if SERVER_TYPOS and index.server_typos:
        # a word of the surface's own vocabulary is that word, not a mistyped server name
        words |= _server_typos(index.server_typos, words.difference(index.weights))
    return [
        members
        for terms, members in index.families
        if (single or len(members) > 1) and all(t in words for t in terms)
    ]


def _server_typos(
    variants: Mapping[str, tuple[tuple[str, str], ...]], words: Iterable[str]
) -> set[str]:
    """The server-name terms the prompt's `words` are one insertion, deletion or swap from (not
    a substitution: "stack" is a word of its own, not "slack" mistyped)."""
    found: set[str] = set()
    for word in words:
        if not _typo_term(word, MIN_SERVER_TYPO_LENGTH - 1):
            continue
        for variant in _deletions(word) | {word}:
            for term, _ in variants.get(variant, ()):
                if term != word and one_edit(word, term) and not _substitution(word, term):
                    found.add(term)
    return found


def _substitution(a: str, b: str) -> bool:
    """Whether `b` is `a` with one letter replaced."""
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b, strict=True)) == 1


def _prefer_named(
    index: _Index,
    named: Sequence[tuple[int, ...]],
    query: Mapping[str, float],
    scores: list[float],
    core: Iterable[str],
) -> None:
    """When the prompt names MCP servers (`named`, `_named_families`), the other tools'
    evidence from the words that the named servers' tools match too counts
    `NAMED_SERVER_OTHERS` of itself (in place; for the whole prompt and for each clause): "with
    Puppeteer, click Buy" is not a job for another browser server's click tool, while a tool
    the prompt asks for with words of its own keeps its score.
    Core tools are in every surface and keep theirs."""
    if not named:
        return
    members = {i for family in named for i in family}
    matched: dict[int, dict[str, float]] = {}  # tool -> its query terms and what they add
    for term, qweight in query.items():
        plain, desc = index.postings.get(term, _NO_POSTINGS)
        for i, w in itertools.chain(plain, desc):
            row = matched.setdefault(i, {})
            row[term] = row.get(term, 0.0) + qweight * w
    theirs = {term for i in members for term in matched.get(i, ())}
    kept = frozenset(core)
    for i, row in matched.items():
        total = sum(row.values())
        if i in members or not scores[i] or total <= 0.0 or index.names[i] in kept:
            continue
        shared = sum(w for term, w in row.items() if term in theirs) / total
        scores[i] *= 1.0 - (1.0 - NAMED_SERVER_OTHERS) * shared


def _family_lists(
    index: _Index,
    named: Sequence[Sequence[int]],
    scores: Sequence[float],
    picks: int = FAMILY_PICKS,
) -> list[list[str]]:
    """For each family the prompt names (`named`): its best `picks` tools (a named MCP server's
    tools compete with each other, not with the built-in tools' richer lexicon)."""
    lists = []
    for members in named:
        best = sorted((i for i in members if scores[i] > 0), key=lambda i: -scores[i])
        if best:
            lists.append([index.names[i] for i in best[:picks]])
    return lists


def _kind_lists(
    index: _Index, own: Mapping[str, float], scores: Sequence[float]
) -> list[list[str]]:
    """For each server whose product a prompt term names the kind of (`_Index.kinds`): its
    best `KIND_PICKS` tools, one list per server (`_family_lists`)."""
    found: dict[str, dict[int, None]] = {}
    for term in own:
        for i in index.kinds.get(term, ()):
            found.setdefault(index.names[i].split(FAMILY_SEPARATOR, 1)[0], {})[i] = None
    return _family_lists(index, [tuple(m) for m in found.values()], scores, KIND_PICKS)


def _contributions(
    index: _Index, query: Mapping[str, float], floor: float = 0.0
) -> tuple[dict[int, dict[str, float]], dict[str, float]]:
    """What each query term adds to a tool's score (as `_score` counts it: only the
    `DESCRIPTION_TERMS` strongest description terms), for the tools whose additions sum to at
    least `floor`; and per term, the most any one tool's addition gives it.

    A large surface matches thousands of tools on a common word, but few can clear the floor:
    a first pass sums every tool's additions without a row per tool, and only those few get
    their row, built in the order `_score` adds the parts (so its sum is exact)."""
    totals = [0.0] * len(index.names)  # name and keyword parts (the first pass's sums)
    plains: dict[str, tuple[float, _Postings]] = {}
    strongest: dict[str, float] = {}
    # as in `_score`: a tool's first description part apart, a list only from the second
    single: dict[int, float] = {}
    single_term: dict[int, str] = {}
    described: dict[int, list[tuple[float, str]]] = {}
    for term, qweight in query.items():
        plain, desc = index.postings.get(term, _NO_POSTINGS)
        if plain:
            for i, w in plain:
                totals[i] += qweight * w
            plains[term] = (qweight, plain)
            strongest[term] = qweight * max(map(_WEIGHT, plain))
        for i, wd in desc:
            if i in described:
                described[i].append((qweight * wd, term))
            elif i in single:
                described[i] = [(single.pop(i), single_term.pop(i)), (qweight * wd, term)]
            else:
                single[i] = qweight * wd
                single_term[i] = term
    # a term in both a tool's name or keywords and its description: the two parts add up
    named = {term: (qweight, dict(plain)) for term, (qweight, plain) in plains.items()}
    low = floor * (1.0 - 1e-9)  # the first pass's sums are within rounding of the rows'
    over: dict[int, None] = {}  # the tools that may clear the floor

    def note(i: int, value: float, term: str) -> None:
        whole = value
        if term in named:
            qweight, weights = named[term]
            if i in weights:
                whole = qweight * weights[i] + value
        if whole > strongest.get(term, 0.0):
            strongest[term] = whole

    for i, value in single.items():
        if totals[i] + value >= low:
            over[i] = None
        note(i, value, single_term[i])
    for i, parts in described.items():
        if len(parts) > DESCRIPTION_TERMS:
            parts = described[i] = sorted(parts, reverse=True)[:DESCRIPTION_TERMS]
        total = totals[i]
        for value, term in parts:
            total += value
            note(i, value, term)
        if total >= low:
            over[i] = None
    rows: dict[int, dict[str, float]] = {}
    for term, (qweight, plain) in plains.items():  # query order, as `_score` adds them
        for i, w in plain:
            if i in over or (i not in single and i not in described and totals[i] >= low):
                rows.setdefault(i, {})[term] = qweight * w
    for i in over:
        row = rows.setdefault(i, {})
        parts = [(single[i], single_term[i])] if i in single else described[i]
        for value, term in sorted(parts, reverse=True):
            row[term] = row.get(term, 0.0) + value
    return {i: row for i, row in rows.items() if row and sum(row.values()) >= floor}, strongest


def _explain(
    residual: dict[str, float], strongest: Mapping[str, float], row: Mapping[str, float]
) -> None:
    """A picked tool spends the share of each term's weight it explains (`_coverage`)."""
    for term, value in row.items():
        residual[term] *= 1.0 - COVERAGE_EXPLAIN * min(1.0, value / strongest[term])


def _coverage(
    index: _Index, query: Mapping[str, float], bar: float, core: frozenset[str]
) -> list[int]:
    """Tools picked greedily to explain the prompt's terms (multi-part requests).

    The best tool explains the terms it matches best; every term keeps only the share of its
    weight that the picked tools have not explained (a term the picked tool is the strongest
    match for is spent). The next pick is the tool with the most unexplained evidence, as long
    as that is at least `COVERAGE_RELATIVE` of the best score and `COVERAGE_MIN`. So "look up
    the opening hours and send them to the family group" keeps the search tool *and* the
    messaging tool, however much stronger one of them matches. Core tools explain terms too
    (they are in the surface anyway) but do not count towards `COVERAGE_PICKS`."""
    floor = max(COVERAGE_MIN, COVERAGE_RELATIVE * bar)
    contrib, strongest = _contributions(index, query, floor)
    if not contrib:
        return []
    residual = dict.fromkeys(strongest, 1.0)
    picked: list[int] = []
    free = 0
    # Lazy greedy: a tool's unexplained evidence only shrinks as residuals fall, so its last
    # computed value bounds its current one. Popping the best bound and recomputing it picks
    # exactly what a full pass over every tool would (ties: the smaller name), without
    # re-summing thousands of weak matches on a large surface each round.
    # A tool whose whole evidence is below the floor can never be picked: it has no row.
    heap = [(-sum(row.values()), index.names[i], i) for i, row in contrib.items()]
    heapq.heapify(heap)
    while heap and len(picked) - free < COVERAGE_PICKS:
        _, name, best = heapq.heappop(heap)
        gain = sum(residual[t] * v for t, v in contrib[best].items())
        if heap and (-gain, name) > heap[0][:2]:
            heapq.heappush(heap, (-gain, name, best))  # stale bound: look again
            continue
        if gain <= 0.0 or gain < floor:
            break
        picked.append(best)
        if name in core:
            free += 1
        _explain(residual, strongest, contrib[best])
    return [i for i in picked if index.names[i] not in core]


def _round_robin(lists: Sequence[Sequence[str]], cap: int) -> tuple[str, ...]:
    """Take the 1st of every list, then the 2nd of every list, ... up to `cap` names.

    The whole-prompt ranking comes first, so a single-clause prompt is a plain top-of-ranking;
    every clause of a multi-part prompt gets its best tool before any gets its second.
    """
    chosen: dict[str, None] = {}
    depth = max((len(x) for x in lists), default=0)
    for level in range(depth):
        for items in lists:
            if level < len(items) and len(chosen) < cap:
                chosen.setdefault(items[level], None)
    return tuple(chosen)


def _best_and_lead(values: Any) -> tuple[int, float]:
    """Where a numpy vector of cosines is largest, and by how much it leads the runner-up (one
    partition, not a sort; ties lead by 0). A lone value leads the lowest cosine, -1."""
    if len(values) < 2:
        return 0, float(values[0]) + 1.0
    second, first = sorted(values.argpartition(-2)[-2:], key=values.__getitem__)
    return int(first), float(values[first] - values[second])


@dataclass(frozen=True)
class _Phrases:
    """A surface's catalog phrases grouped by tool (`_catalog_phrases`)."""

    key: tuple[str, str, int]
    """The semantic matrix's key: ("phrases", *the index's key)"""
    texts: tuple[str, ...]
    starts: tuple[int, ...]
    """Where each tool's phrases start in `texts` (ascending, the first 0)"""
    tools: tuple[int, ...]
    """The tool (its index among the candidates) of each group"""


def _catalog_phrases(index: _Index, catalog: EffectiveCatalog) -> _Phrases:
    """The candidates' keywords and implied phrases (`PHRASE_PICK_SIM`), each once per tool
    (case-folded), tool by tool in candidate order, at most `MAX_CATALOG_PHRASES` in all."""
    texts: list[str] = []
    starts: list[int] = []
    owners: list[int] = []
    for i, name in enumerate(index.names):
        seen: set[str] = set()
        start = len(texts)
        own = itertools.chain(catalog.keywords.get(name, ()), catalog.implied.get(name, ()))
        for phrase in own:
            folded = phrase.strip().casefold()
            if folded and folded not in seen and len(texts) < MAX_CATALOG_PHRASES:
                seen.add(folded)
                texts.append(phrase.strip())
        if len(texts) > start:
            starts.append(start)
            owners.append(i)
    return _Phrases(("phrases", *index.key), tuple(texts), tuple(starts), tuple(owners))


def _passages(tools: Sequence[tuple[str, str]], catalog: EffectiveCatalog) -> list[str]:
    return [passage_text(n, d, catalog.keywords.get(n, ())) for n, d in tools]
