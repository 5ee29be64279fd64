"""No token (command line, environment), alt token or chat-kit client secret appears in anything a
run prints or writes: stdout, stderr, and every file of its report directory (JSON, Markdown,
HTML, JUnit, Allure, ledger), curl lines and exception messages included.

The runs (safety_batch.py): the reference with distinctive tokens, the main one given through
the environment; a broken variant that reflects the credential in every answer; a mutant whose
chat-kit secrets fail CHATKIT-SECRET; and tests that put the tokens in an exception, an
assertion, printed and logged output and a skip reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from safety_batch import batch
from safety_support import ALT_TOKEN, TOKEN, Done

from assistant_conformance.report import redact

# Under xdist the batch is made once, on one worker, for every test that reads it.
pytestmark = pytest.mark.xdist_group("safety-batch")

SECRET_SHAPED = re.compile(r"ck_[A-Za-z0-9_-]{20,}")  # how the reference's client secrets look
RUNS = ("main", "echo", "mutant", "leaky")


def outputs(run: Done) -> Iterator[tuple[str, str]]:
    yield "stdout", run.stdout
    yield "stderr", run.stderr
    for path in sorted(run.report_dir.rglob("*")):
        if path.is_file():
            yield (
                str(path.relative_to(run.report_dir)),
                path.read_bytes().decode("utf-8", "replace"),
            )


@pytest.mark.parametrize("name", RUNS)
def test_no_secret_anywhere(name: str) -> None:
    run, secrets = batch().runs[name], [TOKEN, ALT_TOKEN, *batch().secrets]
    forms = {
        form for s in secrets for form in (s, quote(s, safe=""), s[: redact.MIN_SECRET_LENGTH])
    }
    leaks = [(where, form[:12]) for where, text in outputs(run) for form in forms if form in text]
    leaks += [(where, m[:12]) for where, text in outputs(run) for m in SECRET_SHAPED.findall(text)]
    assert not leaks, leaks
    assert (
        sum(1 for _ in outputs(run)) > 5
    )  # the reports were written: there was something to search


def test_the_runs_had_secrets_to_leak() -> None:
    """Each run put the secrets where they could leak: else the search above proves nothing."""
    runs = batch().runs
    assert runs["main"].returncode == 0, runs["main"].output
    assert len(batch().secrets) >= 2  # chat-kit sessions were created, their secrets used
    echo = runs["echo"]
    assert echo.returncode == 1 and echo.verdicts()["THR-STATUS"] == "fail", echo.output
    assert "[REDACTED]" in (echo.report_dir / "conformance.json").read_text()
    assert "$ASSISTANT_API_TOKEN" in echo.output  # the curl line reads the token from the variable
    mutant = runs["mutant"]
    assert mutant.verdicts()["CHATKIT-SECRET"] in ("fail", "warn"), mutant.output
    leaky = runs["leaky"]
    assert "the token is [REDACTED]" in leaky.output and "asserted: [REDACTED]" in leaky.output
    assert "skipped: [REDACTED]" in leaky.output
    assert any((leaky.report_dir / "allure-results").glob("*-attachment*"))


def test_masks_a_secret_cut_short_and_in_a_url() -> None:
    redact.register("tok-unit-Cut-0123456789", "UNIT_TOKEN")
    assert redact.text("excerpt ends tok-unit-Cut-01") == "excerpt ends [REDACTED]"
    assert redact.text("?t=tok-unit-Cut-0123456789&x=1") == "?t=[REDACTED]&x=1"
    assert redact.as_variable("Bearer tok-unit-Cut-0123456789") == "Bearer $UNIT_TOKEN"


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ('{"client_secret": "anything-here", "n": 1}', '{"client_secret": "[REDACTED]", "n": 1}'),
        ('{\\"access_token\\": \\"abc\\"}', '{\\"access_token\\": \\"[REDACTED]\\"}'),
        ('{"client_secret": "cut-before-the-quo', '{"client_secret": "[REDACTED]'),
        ("-H 'Authorization: Bearer unknown-one'", "-H 'Authorization: Bearer [REDACTED]'"),
        ("Authorization: Bearer $ASSISTANT_API_ALT_TOKEN",) * 2,
        ("a secret is a word here", "a secret is a word here"),
    ],
)  # fmt: skip
def test_masks_unregistered_credentials_by_their_place(text: str, masked: str) -> None:
    assert redact.text(text) == masked


def test_secret_fields_of_answers_are_registered_and_exceptions_masked() -> None:
    redact.register_fields({"items": [{"client_secret": "ck_unit_registered_secret"}]})
    assert redact.text("used ck_unit_registered_secret as a token") == "used [REDACTED] as a token"
    error = ValueError("rejected ck_unit_registered_secret")
    redact.exception(error)
    assert str(error) == "rejected [REDACTED]"
