"""The table of kinds of target: every way the suite's targets are started or reached, one
connector each (reference/connectors.py: the protocol, the `Endpoint` a connector gives, the `url`
and `reference` kinds). Here the kinds the proof adds: a mutant or a variant of the reference (by
name, served by `assistant-reference --mutant/--variant`), and a named foreign server
(proof/foreign.py: LangGraph).

The matrix builds a column's connector from its targets-file entry through `CONNECTORS`; the kill
table starts each case's server by `reference_serving`; the self-tests and bench start theirs the
same way.
A new kind of target is a connector class (`kind`, `what`, `start`) and its row in `CONNECTORS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from assistant_conformance.proof import foreign, mutants, variants
from assistant_conformance.reference.connectors import (
    ConnectError,
    Connector,
    Endpoint,
    ReferenceConnector,
    UrlConnector,
    new_tokens,
)

SERVING_MODULE = "assistant_conformance.proof.serve"  # the reference's command, with the proof's


@dataclass(frozen=True)
class ProofServerConnector:
    """The reference with one of the proof's servers around it, by name from its catalogue."""

    kind: ClassVar[str]
    catalogue: ClassVar[Mapping[str, object]]
    name: str
    tokens: tuple[str, ...] = field(default=(), repr=False)  # given: these, not new ones

    @property
    def what(self) -> str:
        return f"reference server, {self.kind} {self.name}"

    def start(self, workdir: Path) -> Endpoint:
        if self.name not in self.catalogue:
            raise ConnectError(f"no {self.kind} named {self.name!r}")
        return reference_serving(self.kind, self.name, self.tokens).start(workdir)


class MutantConnector(ProofServerConnector):
    """The reference with one mutant around it (proof/mutants): a server the suite must catch."""

    kind = "mutant"
    catalogue = mutants.MUTANTS


class VariantConnector(ProofServerConnector):
    """The reference with one variant around it (proof/variants): a server the suite must pass."""

    kind = "variant"
    catalogue = variants.VARIANTS


def reference_serving(kind: str, name: str, tokens: tuple[str, ...] = ()) -> ReferenceConnector:
    """The reference serving the proof's `kind` (mutant, variant) `name`."""
    return ReferenceConnector(
        tokens=tokens, server_args=(f"--{kind}", name), module=SERVING_MODULE, prefix=kind
    )


@dataclass(frozen=True)
class ForeignConnector:
    """A server no one here wrote, by name (proof/foreign.py), on loopback; `graphs`: only these
    of its graphs (default: all)."""

    kind: ClassVar[str] = "langgraph"
    graphs: tuple[str, ...] = ()
    tokens: tuple[str, ...] = field(default=(), repr=False)

    @property
    def what(self) -> str:
        return "LangGraph Agent Server (langgraph-cli[inmem]), on loopback"

    def start(self, workdir: Path) -> Endpoint:
        tokens = self.tokens or new_tokens(self.kind)
        workdir.mkdir(parents=True, exist_ok=True)
        try:
            versions = foreign.langgraph_versions()
            server = foreign.start_langgraph(list(tokens), workdir, graphs=self.graphs)
        except foreign.ForeignStartError as exc:
            raise ConnectError(str(exc)) from None
        return Endpoint(server.base_url, tokens, versions, server.stop)


def _reference(entry: Mapping[str, Any]) -> Connector:
    return ReferenceConnector()


# kind -> its connector, from a targets-file entry (matrix/targets.py: `kind` and its own keys).
CONNECTORS: dict[str, Callable[[Mapping[str, Any]], Connector]] = {
    UrlConnector.kind: lambda entry: UrlConnector(
        entry["url"], entry["token_env"], entry.get("alt_token_env", ""), entry.get("version", "")
    ),
    ReferenceConnector.kind: _reference,
    MutantConnector.kind: lambda entry: MutantConnector(entry["mutant"]),
    VariantConnector.kind: lambda entry: VariantConnector(entry["variant"]),
    ForeignConnector.kind: lambda entry: ForeignConnector(),
}
# The kinds of server the proof serves by name, and their registries.
NAMED: dict[str, Mapping[str, object]] = {
    MutantConnector.kind: mutants.MUTANTS,
    VariantConnector.kind: variants.VARIANTS,
}


def connector(entry: Mapping[str, Any]) -> Connector:
    """The connector of a targets-file entry (its `kind` and that kind's keys)."""
    return CONNECTORS[entry["kind"]](entry)
