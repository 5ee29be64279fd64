"""A failed finding's exchange as the reports keep it: one frozen value, built where the finding is
made (suite/http/exchange.py: `evidence_record`, redacted), carried on the finding
(report/model.py: `Finding.evidence`) across pytest-xdist's workers and results.json as its JSON
data, and written into conformance.json and read back by the same class
(report/conformance_json.py: `FindingRecord.evidence`).

`Part` is the base of every record of conformance.json: frozen, and no key it does not name. A
record keeps which of its fields it was given (`model_fields_set`): a field left out when it was
made stays out of the JSON (`exclude_unset`), so an exchange says `har` and `entry` only in an
audit.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

Count = Annotated[int, Field(ge=0)]


class Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RequestRecord(Part):
    method: str
    url: str
    headers: dict[str, str]
    body: str


class ResponseRecord(Part):
    status: int | None
    headers: dict[str, str]
    body: str


class ExchangeRecord(Part):
    """A failed finding's exchange, redacted: what was sent, the start of what came back, and
    the curl line that sends it again."""

    request: RequestRecord
    response: ResponseRecord
    curl: str
    har: str = Field(default="", description="an audit's: the HAR file the exchange is in")
    entry: Count = Field(default=0, description="an audit's: the exchange's index in that file")

    def as_json(self) -> dict[str, object]:
        """The exchange as JSON data, with the fields it was given, in the model's order."""
        return self.model_dump(mode="json", exclude_unset=True)
