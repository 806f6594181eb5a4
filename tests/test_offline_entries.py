"""An MCP server's entry tools (resolver/_offline.py, `_entry_picks`), and the values a prompt
carries that stand for a word: a table's snake_case columns ("sql"), a chat channel ("channel").

Entry tools: a picked tool that takes an identifier (``page_id``) needs the server's search
tool first when the user names the thing by its title; a prompt with a link needs the server's
tool that opens one before a tool that works on the open page; a UI automation server's tool
that fills in a form needs its click tool after it (the form is submitted); any task on a
server's things usually starts by looking at them with its general reader (``kubectl_get``)."""

from __future__ import annotations

import asyncio

import pytest

import resolver._offline as offline
from resolver import Resolver, ResolverConfig, ToolInfo, TurnRequest

FILLER = ["export", "share", "archive", "restore", "duplicate", "lock", "translate", "print"]
"""Each server has a dozen tools, as real ones do."""


def tool(name: str, description: str, *properties: str) -> ToolInfo:
    """A tool as an MCP server lists it: its parameter schema names `properties`."""
    schema = {"type": "object", "properties": {p: {"type": "string"} for p in properties}}
    return ToolInfo(name=name, description=description, parameters=schema)


WIKI = [
    tool("wiki__search", "Search pages and databases by title", "query"),
    tool("wiki__append_markdown", "Append markdown content to a page", "page_id", "markdown"),
    *(tool(f"wiki__{job}_page", f"{job.capitalize()} a page", "page_id") for job in FILLER),
]
BROWSER = [
    tool("devtools__navigate_page", "Go to a URL, or back, forward, or reload.", "pageId", "url"),
    tool("devtools__new_page", "Open a new tab and load a URL.", "url"),
    tool(
        "devtools__take_heap_snapshot",
        "Take a heap snapshot of the selected page's memory",
        "pageId",
    ),
    # a link among its options: not a tool that opens one
    tool(
        "devtools__start_trace", "Start a performance trace on the selected page", "reload", "url"
    ),
    *(tool(f"devtools__{job}", f"Page {job}") for job in FILLER),
]
UI = [
    tool("ui__browser_fill_form", "Fill multiple form fields", "fields"),
    tool("ui__browser_type", "Type text into editable element", "element", "text"),
    tool("ui__browser_click", "Perform click on a web page", "element"),
    tool("ui__browser_double_click", "Perform a double click on a web page", "element"),
    tool("ui__browser_hover", "Hover over element on page", "element"),
    *(tool(f"ui__browser_{job}", f"Browser {job}") for job in FILLER),
]
KUBE = [
    tool("kube__kubectl_get", "Get or list resources by type and name", "resourceType", "name"),
    tool("kube__kubectl_describe", "Describe resources by type and name", "resourceType", "name"),
    tool("kube__kubectl_scale", "Scale a deployment", "name", "replicas"),
    tool("kube__kubectl_logs", "Get logs from pods", "name", "container"),
    tool("kube__install_chart", "Install a Helm chart", "chart"),
]
TRACKER = [
    # "list_issues": a read verb and a thing, not a general reader
    tool("tracker__list_issues", "List the issues of a project", "project"),
    tool("tracker__create_issue", "Open an issue in a project", "project", "title"),
    tool("tracker__close_issue", "Close an issue", "project", "number"),
    tool("tracker__comment_issue", "Comment on an issue", "project", "number", "body"),
]
OTHERS = [
    ToolInfo(name="db__query", description="Run a read-only SQL query"),
    ToolInfo(name="db__list_schemas", description="List the schemas of the database"),
    ToolInfo(name="chat__post_message", description="Post a message to a channel"),
    ToolInfo(name="chat__get_history", description="Read the recent messages of a channel"),
    ToolInfo(name="chat__list_users", description="List the users of the workspace"),
    ToolInfo(name="calendar_event", description="Create a calendar event"),
    ToolInfo(name="weather", description="Current weather and forecast for a place"),
]
TOOLS = [*WIKI, *BROWSER, *UI, *KUBE, *TRACKER, *OTHERS]


def picks(prompt: str, tools: list[ToolInfo] = TOOLS) -> tuple[str, ...]:
    resolver = Resolver(ResolverConfig(keyword_cache_file="", core_tools=()))
    res = asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=tools)))
    return tuple(res.tools_allow or ())


def test_a_page_named_by_its_title_brings_the_servers_search_tool() -> None:
    prompt = "append the Q3 numbers to the 'Quarterly review' page"
    allowed = picks(prompt)
    assert "wiki__append_markdown" in allowed
    assert "wiki__search" in allowed


def test_without_parameter_words_no_search_tool_is_added(monkeypatch: pytest.MonkeyPatch) -> None:
    """Which tools take an identifier comes from the host's parameter words: a host that
    sends none gets no entry tools (and switched off, none either)."""
    prompt = "append the Q3 numbers to the 'Quarterly review' page"
    bare = [t.model_copy(update={"parameters": ""}) for t in TOOLS]
    allowed = picks(prompt, bare)
    assert "wiki__append_markdown" in allowed and "wiki__search" not in allowed
    monkeypatch.setattr(offline, "ENTRY_TOOLS", False)
    allowed = picks(prompt)
    assert "wiki__append_markdown" in allowed and "wiki__search" not in allowed


def test_a_link_brings_the_tools_that_open_one() -> None:
    allowed = picks("take a heap snapshot of https://staging.example.com/dashboard")
    assert "devtools__take_heap_snapshot" in allowed
    assert {"devtools__navigate_page", "devtools__new_page"} <= set(allowed)
    # a tool with a url option that does not say it opens one is no entry
    assert "devtools__start_trace" not in allowed


@pytest.mark.parametrize(
    "prompt",
    [
        "take a heap snapshot of staging.example.com/dashboard",
        "take a heap snapshot of the app on localhost:5173/login",
        "take a heap snapshot of intranet.corp.local",
    ],
)
def test_a_link_typed_without_a_scheme_is_a_link(
    prompt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """People type "stripe.com/pricing", not "https://stripe.com/pricing": a bare host name
    with a web domain, or localhost, opens a page as a full link does."""
    assert {"devtools__navigate_page", "devtools__new_page"} <= set(picks(prompt))
    scheme_only = (offline._SCHEME_LINK, *offline._ENTITIES[0][1:])
    monkeypatch.setattr(offline, "_LINK", offline._SCHEME_LINK)
    monkeypatch.setattr(offline, "_ENTITIES", (scheme_only, *offline._ENTITIES[1:]))
    assert "devtools__navigate_page" not in picks(prompt)


@pytest.mark.parametrize(
    ("text", "links"),
    [
        ("compare stripe.com/pricing with linear.app/pricing", ["stripe.com", "linear.app"]),
        ("is travel.state.gov down?", ["travel.state.gov"]),
        ("open localhost:3000 please", ["localhost:3000"]),
        ("see https://a.example/x?y=1", ["https://a.example/x?y=1"]),
        ("open example.com.", ["example.com"]),
        # file names, frameworks, versions, e-mail addresses and abbreviations are no links
        ("edit notes.md and run.sh, then main.py", []),
        ("port it from ASP.NET to Node.js", []),
        ("bump it to v1.2.3, e.g. today", []),
        ("mail ana@acme.com", []),
    ],
)
def test_what_counts_as_a_link(text: str, links: list[str]) -> None:
    assert [m.group() for m in offline._LINK.finditer(text)] == links


def test_a_links_host_is_no_repository() -> None:
    """ "screenshots of stripe.com/pricing" names a page, not the repository "pricing" of an
    owner "stripe.com"; "stale PRs in acme/checkout" still names one."""
    repository = next(e for e in offline._ENTITIES if e[1] == ("repositori", "owner"))[0]
    assert repository.search("stale PRs in acme/checkout")
    assert not repository.search("grab screenshots of stripe.com/pricing")
    assert not repository.search("the login form on localhost:3000/login")


def test_without_a_link_no_opener_is_added() -> None:
    allowed = picks("take a heap snapshot of the dashboard tab")
    assert "devtools__take_heap_snapshot" in allowed
    assert "devtools__navigate_page" not in allowed and "devtools__new_page" not in allowed


def test_entry_tools_join_only_a_server_with_a_pick() -> None:
    allowed = picks("append the Q3 numbers to the 'Quarterly review' page")
    assert not any(name.startswith("devtools__") for name in allowed)
    allowed = picks("take a heap snapshot of https://staging.example.com/dashboard")
    assert not any(name.startswith("wiki__") for name in allowed)


@pytest.mark.parametrize(
    "prompt",
    [
        "weekly active accounts, last 8 weeks, from events(account_id, occurred_at)",
        "how many orders are stuck? orders.status / orders.created_at",
        "average basket per country, tabla orders: country, total_cents, created_at",
        "上个月每天的付款总额，表是 payments（order_no, paid_at, amount）",
    ],
)
def test_a_tables_columns_are_evidence_for_the_sql_tool(prompt: str) -> None:
    assert "db__query" in picks(prompt)


@pytest.mark.parametrize(
    "prompt",
    ["call foo(a, b) twice", "open notes.md and budget.xlsx", "rename report_final to done"],
)
def test_prose_and_file_names_are_no_columns(prompt: str) -> None:
    assert "db__query" not in picks(prompt)


def test_a_channel_mention_is_evidence_for_the_chat_tools() -> None:
    allowed = picks("the alert in #alerts-prod a minute ago: what did it say?")
    assert "chat__get_history" in allowed
    assert "chat__get_history" not in picks("fix issue #88, the alert one")


def test_a_named_channel_brings_the_servers_post_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    """A channel is read or written to: "drop the list in #board-prep" writes with a verb no
    tool says, so a picked chat server's post tool joins whenever the prompt names a channel."""
    prompt = "list the open issues of the web project and drop the list in #board-prep"
    assert "chat__post_message" in picks(prompt)
    assert "chat__post_message" in picks("read the history of #ops")
    monkeypatch.setattr(offline, "CHANNEL_POST", False)
    assert "chat__post_message" not in picks(prompt)


def test_a_named_channel_keeps_a_chat_tool_among_stronger_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The channel's clause says "share", "page" and "link", which the other servers' tools
    say louder than any chat tool does; the channel itself keeps the best chat tool
    (`ENTITY_PICKS`), and that brings the post tool (`CHANNEL_POST`)."""
    prompt = (
        "scale the api deployment to 4 replicas, then share the news in #ops-updates with a "
        "page link"
    )
    allowed = picks(prompt)
    assert {"kube__kubectl_scale", "chat__get_history", "chat__post_message"} <= set(allowed)
    monkeypatch.setattr(offline, "ENTITY_PICKS", 0)
    assert not any(name.startswith("chat__") for name in picks(prompt))


def test_an_issue_number_keeps_no_chat_tool() -> None:
    allowed = picks(
        "scale the api deployment to 4 replicas, then close issue #4412 of the web project"
    )
    assert not any(name.startswith("chat__") for name in allowed)


def test_no_post_tool_without_a_named_channel() -> None:
    """The chat server is picked, but no channel is named ("#4412" is an issue number)."""
    for prompt in ("read the history of the ops room", "read the channel history of ticket #4412"):
        allowed = picks(prompt)
        assert "chat__get_history" in allowed and "chat__post_message" not in allowed


def test_a_filled_form_brings_the_servers_click_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    prompt = "fill the signup form fields with name Ada and email ada@example.org"
    allowed = picks(prompt)
    assert "ui__browser_fill_form" in allowed
    # the plain click, not every tool named "click"
    assert "ui__browser_click" in allowed and "ui__browser_double_click" not in allowed
    monkeypatch.setattr(offline, "FORM_SUBMIT", False)
    assert "ui__browser_click" not in picks(prompt)


def test_the_click_tool_comes_from_the_names_alone() -> None:
    """Unlike the search and URL entries, no parameter words are needed."""
    bare = [t.model_copy(update={"parameters": ""}) for t in TOOLS]
    allowed = picks("type the coupon text SAVE10 into the editable element", bare)
    assert "ui__browser_type" in allowed and "ui__browser_click" in allowed


def test_no_click_tool_without_a_fill_pick() -> None:
    allowed = picks("hover over the element on the page")
    assert "ui__browser_hover" in allowed and "ui__browser_click" not in allowed


def test_a_servers_pick_brings_its_general_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    prompt = "scale the checkout deployment to 5 replicas"
    allowed = picks(prompt)
    assert "kube__kubectl_scale" in allowed and "kube__kubectl_get" in allowed
    monkeypatch.setattr(offline, "SERVER_READER", False)
    assert "kube__kubectl_get" not in picks(prompt)


def test_a_reader_is_a_read_verb_after_the_servers_naming_prefix() -> None:
    names = [t.name for t in [*KUBE, *TRACKER]]
    kube = range(len(KUBE))
    tracker = range(len(KUBE), len(names))
    assert offline._reader(names, kube) == (0,)
    assert offline._reader(names, tracker) == ()
    # a first word fewer than READER_PREFIX_TOOLS names start with is no naming prefix
    short = ["k__kubectl_get", "k__kubectl_apply", "k__install_chart"]
    assert offline._reader(short, range(3)) == ()
    assert offline._reader(["k__apply", "k__list"], range(2)) == (1,)
    assert offline._reader(["k__getItems", "k__get", "k__API-get-self"], range(3)) == (1,)


def test_no_reader_without_a_pick_of_its_server() -> None:
    allowed = picks("comment on issue 12 of the infra project: fixed in the last release")
    assert "tracker__comment_issue" in allowed
    assert not any(name.startswith("kube__") for name in allowed)


def test_the_reasoning_names_the_tools_that_joined_as_entry_tools() -> None:
    """What `resolver resolve --json` and telemetry (with capturePrompts) show: a tool that
    joined as an entry tool is named as one, not left to look like a weak pick."""
    resolver = Resolver(ResolverConfig(keyword_cache_file="", core_tools=()))
    prompt = "scale the checkout deployment to 5 replicas"
    res = asyncio.run(resolver.resolve(TurnRequest(prompt=prompt, tools=TOOLS)))
    assert "tools the picks need first: kube__kubectl_get" in res.reasoning
    res = asyncio.run(resolver.resolve(TurnRequest(prompt="what's the weather", tools=TOOLS)))
    assert "entry tools" not in res.reasoning


NETWORK = [
    tool("net__get_network_request", "Get a network request by its reqid", "reqid"),
    tool("net__list_network_requests", "List the network requests of the page", "pageSize"),
    tool("net__get_console_message", "Get a console message by its msgid", "msgid"),
    tool("net__list_console_messages", "List the console messages of the page", "pageSize"),
    *(tool(f"net__{job}_page", f"{job.capitalize()} the page") for job in FILLER),
]


def test_a_tool_acting_on_one_thing_brings_the_lister_of_such_things(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A request's id comes from the server's list of requests: picking the tool that gets
    one request brings the tool that lists them; switched off, it does not."""
    prompt = "which cookies does reqid 42 set?"
    allowed = picks(prompt, [*TOOLS, *NETWORK])
    assert "net__get_network_request" in allowed
    assert "net__list_network_requests" in allowed
    # only the lister of the thing picked
    assert "net__list_console_messages" not in allowed
    monkeypatch.setattr(offline, "LISTERS", False)
    assert "net__list_network_requests" not in picks(prompt, [*TOOLS, *NETWORK])


def test_a_lister_is_list_before_the_same_words() -> None:
    """From the names alone: a verb that acts on one existing thing, the same words after
    it (as stems: "messages" is "message"), ``list`` before them; not a tool that makes one."""
    names = [
        "s__get_console_message",
        "s__list_console_messages",
        "s__update_issue",
        "s__create_issue",
        "s__list_issues",
        "s__get_pull_request",
        "s__list_pull_request_files",
    ]
    assert offline._listers(names, range(len(names))) == {0: 1, 2: 4}
