"""The API's kinds of resource, one row each: what makes one, what removes it, where its id is,
how a run finds again what it made, and which capability group it belongs to.

Everything that deals with resources reads this table, none keeps a list of its own:
- the ledger (suite/safety/ledger.py): a request is a create when it matches a row's `creates`,
  and the answer's `id_field` (or the body's `named_by` fields) fill the delete it records;
  nothing is recorded for a part (`within`: removed with what holds it);
- the removal (suite/safety/removal.py): the kind of a create or delete path (`resource_at`);
- the lookup (suite/safety/lookup.py): where a create's body carries the run's mark (`mark`) and
  the search that finds it again (`search`);
- the capability probes (suite/run/capabilities.py): each optional group's probes
  (`capability_probes`), and the groups whose probe is a write (`write_probed`);
- the pre-flight (suite/http/target.py): the reads it tries in table order (`preflight_reads`);
- the OpenAPI table (openapi.py): the resource a path parameter `id` names (`id_key_at`).
Adding a kind of resource is one row of RESOURCES (selftests/contract/test_resources.py: every
operation of the document that creates or deletes is some row's, and a new row reaches each of
the readers above).

It imports nothing of the package: openapi.py reads it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from urllib.parse import quote

# What the suite makes and cannot remove (a chat-kit session) asks to live minutes, no more:
# every generated body that has a lifetime field sets it within LIFETIMES seconds.
LIFETIME_FIELD = "expires_after"
LIFETIME = 300  # seconds: what a sample body asks
LIFETIMES = (60, 600)  # seconds: the least and the most a generated body asks
SHORT_LIFETIME = 1  # seconds, the least the document allows: the chat-kit probe's, whose expiry
# the expiry check then waits for (a second of other tests later, nothing left to wait)
UPLOAD = "file"  # `mark` of a multipart upload: the run's mark is the uploaded file's name


@cache
def _template_pattern(template: str) -> re.Pattern[str]:
    return re.compile(re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template)))


@dataclass(frozen=True)
class Route:
    """One operation: its method and its path as the document writes it (`{param}`)."""

    method: str  # upper case
    path: str
    documented: bool = True  # False: not in the interface document (LangGraph's store items)

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"

    def matches(self, method: str, path: str) -> bool:
        """Whether a request (its method, its path without the target's base) is this one's."""
        return method.upper() == self.method and bool(_template_pattern(self.path).fullmatch(path))

    def filled(self, value: str) -> str:
        """The path with its (one) parameter set to `value`, quoted; as it is without one."""
        return re.sub(r"\{\w+\}", lambda _: quote(value, safe=""), self.path, count=1)


@dataclass(frozen=True)
class Ask:
    """A request the suite sends without path parameters: the operation and its JSON body
    (None: no body)."""

    route: Route
    body: Mapping[str, Any] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Create:
    """An operation that makes a resource, and the delete that removes what it made (None: the
    interface has none)."""

    route: Route
    removed_by: Route | None


@dataclass(frozen=True)
class Search:
    """How a run finds again what it made, by the run's mark its create carried: the search
    operation, where its body asks for the mark's value (a path of keys), and how it pages."""

    route: Route
    asks: tuple[str, ...]  # e.g. ("where", "title"): {"where": {"title": <the mark's value>}}
    limit: str = "limit"
    offset: str = "offset"

    def body(self, value: Any, limit: int, offset: int) -> dict[str, Any]:
        """One page's request body."""
        asked: Any = value
        for key in reversed(self.asks):
            asked = {key: asked}
        return {**asked, self.limit: limit, self.offset: offset}


@dataclass(frozen=True)
class Resource:
    """One kind of resource of the API."""

    name: str  # as reports say it: "thread", "knowledge base"
    path: str = ""  # pattern of its create and delete paths (a request's path, fully matched)
    creates: tuple[Create, ...] = ()
    deletes: tuple[Route, ...] = ()  # its own deletes
    id_field: str | None = None  # the answer's field with its id (a create's, a search's items)
    named_by: tuple[str, ...] = ()  # or: the fields of its body its delete's JSON body names
    id_key: str | None = None  # the key of its id where a path names it `{id}`
    mark: str | None = None  # the create body's field carrying the run's mark (UPLOAD: the file)
    search: Search | None = None  # how what a create made is found by that mark
    group: str | None = None  # its optional capability group (None: core)
    probes: tuple[Ask, ...] = ()  # the group's probes it brings (without path parameters)
    reads: tuple[Ask, ...] = ()  # reads without effect, for the pre-flight (in table order)
    within: str | None = None  # a part: removed with the resource of this name, never alone

    @property
    def removable(self) -> bool:
        """Whether anything removes one (the interface has no delete for a chat-kit session)."""
        return self.removed_by is not None

    def at(self, path: str) -> bool:
        return bool(self.path) and re.fullmatch(self.path, path) is not None

    @property
    def removed_by(self) -> Route | None:
        """The delete that removes one a search found (its creates' first)."""
        return next((c.removed_by for c in self.creates if c.removed_by is not None), None)


def _post(path: str, body: Mapping[str, Any] | None = None, documented: bool = True) -> Ask:
    return Ask(Route("POST", path, documented), body)


_THREAD = "/api/ai/threads/{thread_id}"
_CONVERSATION = "/api/ai/conversations/{conversation_id}"
_CONTEXT_FILE = "/api/ai/contexts/file/{id}"
_STORE_ITEMS = "/api/ai/store/items"  # PUT and DELETE: LangGraph's, not in the interface document
_KB_ITEMS = ("/api/ai/v1/kb", "/api/ai/knowledges")  # one knowledge-base API at two prefixes
_CHATKIT = "/api/ai/v1/chatkit/sessions"

RESOURCES: tuple[Resource, ...] = (
    Resource(
        "thread",
        r"/api/ai/threads(?:/[^/]+(?:/copy)?)?",
        creates=(
            Create(Route("POST", "/api/ai/threads"), Route("DELETE", _THREAD)),
            Create(Route("POST", f"{_THREAD}/copy"), Route("DELETE", _THREAD)),
        ),
        deletes=(Route("DELETE", _THREAD),),
        id_field="thread_id",
        mark="metadata",
        search=Search(Route("POST", "/api/ai/threads/search"), ("metadata",)),
        reads=(_post("/api/ai/threads/search", {"limit": 1}),),
    ),
    Resource(
        "assistant",
        r"/api/ai/assistants(?:/[^/]+)?",
        id_key="assistant",
        reads=(
            _post("/api/ai/assistants/search", {"limit": 1}),
            _post("/api/ai/assistants/count", {}),
        ),
    ),
    Resource(
        "conversation",
        r"/api/ai/conversations(?:/[^/]+)?",
        creates=(Create(Route("POST", "/api/ai/conversations"), Route("DELETE", _CONVERSATION)),),
        deletes=(Route("DELETE", _CONVERSATION),),
        id_field="id",
        mark="title",
        search=Search(
            Route("POST", "/api/ai/conversations/search"), ("where", "title"), "take", "skip"
        ),
        group="conversations",
        probes=(_post("/api/ai/conversations/search", {}),),
        reads=(_post("/api/ai/conversations/search", {}),),
    ),
    Resource(
        "store item",
        r"/api/ai/store/items",
        creates=(Create(Route("PUT", _STORE_ITEMS, False), Route("DELETE", _STORE_ITEMS, False)),),
        deletes=(Route("DELETE", _STORE_ITEMS, False),),
        named_by=("namespace", "key"),
        mark="namespace",
        search=Search(Route("POST", "/api/ai/store/items/search"), ("namespace_prefix",)),
        group="store",
        probes=(_post("/api/ai/store/items/search", {}), _post("/api/ai/store/namespaces", {})),
        reads=(_post("/api/ai/store/items/search"), _post("/api/ai/store/namespaces")),
    ),
    Resource(
        # No delete in the interface for /v1/file: the context file's delete is tried (the
        # reference's removes any file); where it fails, the file is said to be left behind.
        "file",
        r"/api/ai/v1/file",
        creates=(Create(Route("POST", "/api/ai/v1/file"), Route("DELETE", _CONTEXT_FILE)),),
        id_field="id",
        mark=UPLOAD,
        group="files",
        probes=(_post("/api/ai/v1/file", {}),),
    ),
    Resource(
        "context file",
        r"/api/ai/contexts/file(?:/[^/]+)?",
        creates=(Create(Route("POST", "/api/ai/contexts/file"), Route("DELETE", _CONTEXT_FILE)),),
        deletes=(Route("DELETE", _CONTEXT_FILE),),
        id_field="id",
        id_key="context_file",
        mark=UPLOAD,
        group="contexts",
        probes=(_post("/api/ai/contexts/file", {}),),
    ),
    Resource(
        # The interface has no delete: it expires. The probe's asks to live a second; it counts
        # in the run's budget, and the expiry check uses it (its secret has expired by then).
        "chat-kit session",
        r"/api/ai/v1/chatkit/sessions",
        creates=(Create(Route("POST", _CHATKIT), None),),
        group="chatkit",
        probes=(_post(_CHATKIT, {LIFETIME_FIELD: SHORT_LIFETIME}),),
    ),
    Resource(
        "knowledge base",
        r"/api/ai/(?:v1/kb|knowledges)(?:/[^/]+)?",
        creates=tuple(Create(Route("POST", p), Route("DELETE", f"{p}/{{id}}")) for p in _KB_ITEMS),
        deletes=tuple(Route("DELETE", f"{p}/{{id}}") for p in _KB_ITEMS),
        id_field="id",
        id_key="kb",
        mark="name",
    ),
    # Parts: made inside another resource and removed with it; the ledger records none.
    Resource(
        "run",
        creates=tuple(
            Create(Route("POST", f"{_THREAD}/runs{way}"), None) for way in ("", "/stream", "/wait")
        ),
        within="thread",
    ),
    Resource(
        "message",
        creates=(Create(Route("POST", f"{_CONVERSATION}/messages"), None),),
        within="conversation",
    ),
    Resource(
        "feedback",
        deletes=(
            Route("DELETE", f"{_CONVERSATION}/messages/{{message_id}}/feedbacks/{{feedback_id}}"),
        ),
        within="message",
    ),
    Resource(
        "document",
        creates=tuple(Create(Route("POST", f"{p}/{{id}}/bulk"), None) for p in _KB_ITEMS),
        within="knowledge base",
    ),
)


def kinds() -> tuple[Resource, ...]:
    """The rows the ledger deals with: every kind but the parts."""
    return tuple(r for r in RESOURCES if r.within is None)


def resource_at(path: str) -> Resource | None:
    """The kind a create or delete path is about (the first row whose pattern it matches)."""
    return next((r for r in kinds() if r.at(path)), None)


def create_at(method: str, path: str) -> tuple[Resource, Create] | None:
    """What a request makes (its path without the target's base), by the table: None when it
    makes no resource the ledger records."""
    for resource in kinds():
        for create in resource.creates:
            if create.route.matches(method, path):
                return resource, create
    return None


def id_key_at(path: str) -> str | None:
    """The key of the resource a path parameter `{id}` names in `path` (a template): the row
    whose pattern the path up to `{id}` matches."""
    if "{id}" not in path:
        return None
    named = path[: path.index("{id}")] + "id"
    return next((r.id_key for r in RESOURCES if r.id_key and r.at(named)), None)


def capability_probes() -> dict[str, tuple[Ask, ...]]:
    """Each optional group's probes (its rows', in table order), groups in table order."""
    groups: dict[str, tuple[Ask, ...]] = {}
    for resource in RESOURCES:
        if resource.group is not None:
            groups[resource.group] = groups.get(resource.group, ()) + resource.probes
    return groups


def write_probed() -> tuple[str, ...]:
    """The groups a probe of which is a create (a write: --read-only leaves them unprobed)."""
    creates = {c.route for r in RESOURCES for c in r.creates}
    return tuple(
        g for g, asks in capability_probes().items() if any(a.route in creates for a in asks)
    )


def preflight_reads() -> tuple[Ask, ...]:
    """The reads without path parameters and without effect the pre-flight tries, in order."""
    return tuple(ask for resource in RESOURCES for ask in resource.reads)
