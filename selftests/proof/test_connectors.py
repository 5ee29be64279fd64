"""One table of kinds of target, one way to run the suite against one (proof/connectors.py,
reference/connectors.py, proof/suiterun.py):

- every kind the matrix's targets file accepts is a row of CONNECTORS, and every row a kind it
  accepts; each column's connector is built through that table, and a new row reaches it;
- an endpoint never shows its tokens (repr, the matrix's column.json), and a suite run gets them
  in its environment, never on its command line; a URL whose variable is unset is refused naming
  the variable;
- a reference endpoint answers, a launched one is reachable before it is waited for, and stop
  ends it;
- a run's result says why it has no document (past its time, none written).
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from assistant_conformance.matrix import runner
from assistant_conformance.matrix.targets import MatrixTarget, parse_plan, targets_schema
from assistant_conformance.proof import connectors, suiterun
from assistant_conformance.proof.connectors import CONNECTORS, MutantConnector
from assistant_conformance.reference.connectors import (
    TOKEN_VARIABLES,
    ConnectError,
    Endpoint,
    ReferenceConnector,
    UrlConnector,
)
from assistant_conformance.suite.config.options import OPTIONS

SECRET = "tok-Connector-Never-Shown-4e1d"


def test_the_targets_file_kinds_are_the_table_of_connectors() -> None:
    kinds = targets_schema()["$defs"]["target"]["properties"]["kind"]["enum"]
    assert sorted(kinds) == sorted(CONNECTORS)


def test_a_column_gets_its_connector_through_the_table(monkeypatch) -> None:
    plan = parse_plan(
        {
            "targets": [
                {"name": "m", "kind": "mutant", "mutant": "create-thread-200"},
                {"name": "u", "kind": "url", "url": "https://x.invalid", "token_env": "T"},
                {"name": "r", "kind": "reference"},
            ]
        }
    )
    made = [target.connector() for target in plan.targets]
    assert made[0] == MutantConnector("create-thread-200")
    assert made[1] == UrlConnector("https://x.invalid", "T")
    assert made[2] == ReferenceConnector()

    class Elsewhere:
        kind = "elsewhere"
        what = "a server of another kind"

    monkeypatch.setitem(CONNECTORS, "elsewhere", lambda entry: Elsewhere())
    assert MatrixTarget("e", "elsewhere").what == "a server of another kind"


def test_an_endpoint_never_shows_its_tokens(tmp_path: Path) -> None:
    endpoint = Endpoint("http://127.0.0.1:9", (SECRET, SECRET + "-alt"), {"x": "1"})
    assert SECRET not in repr(endpoint)
    assert endpoint.environment() == {
        TOKEN_VARIABLES[0]: SECRET,
        TOKEN_VARIABLES[1]: SECRET + "-alt",
    }
    assert set(TOKEN_VARIABLES) <= {option.env for option in OPTIONS}  # the suite reads them
    column = runner.Column(MatrixTarget("r", "reference"), runner.COMPLETED)
    plan = parse_plan({"targets": [{"name": "r", "kind": "reference"}]})
    runner.save_column(column, plan, tmp_path)
    assert SECRET not in (tmp_path / runner.COLUMN_FILE).read_text()


def test_a_run_gets_the_tokens_in_its_environment_only(monkeypatch, tmp_path: Path) -> None:
    seen: dict[str, object] = {}

    def python(argv, cwd, env, log, timeout, errors=None, fresh=False):
        seen.update(argv=argv, env=env)
        log.write_text("ran\n")
        return 3

    monkeypatch.setattr(suiterun, "run_python", python)
    endpoint = Endpoint("http://127.0.0.1:9", (SECRET, SECRET + "-alt"))
    options = suiterun.SuiteOptions(tmp_path / "reports", ("tests/scenario",), tmp_path / "log")
    result = suiterun.run_suite(endpoint, options)
    assert not [word for word in seen["argv"] if SECRET in word]  # type: ignore[attr-defined]
    assert "--base-url=http://127.0.0.1:9" in seen["argv"]  # type: ignore[operator]
    assert seen["env"][TOKEN_VARIABLES[0]] == SECRET  # type: ignore[index]
    assert (result.returncode, result.document, result.stdout) == (3, None, "ran\n")
    assert result.problem == "no conformance.json (pytest exit 3)"


def test_a_run_past_its_time_says_so(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(suiterun, "run_python", lambda *args, **kwargs: None)
    options = suiterun.SuiteOptions(tmp_path / "reports", timeout=5)
    result = suiterun.run_suite(None, options)
    assert result.returncode is None and result.document is None
    assert result.problem == "the suite run did not end within 5 s"


def test_a_url_without_its_variable_is_refused_by_name(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("H48_NO_SUCH_TOKEN", raising=False)
    with pytest.raises(ConnectError, match="H48_NO_SUCH_TOKEN"):
        UrlConnector("https://x.invalid", "H48_NO_SUCH_TOKEN").start(tmp_path)
    monkeypatch.setenv("H48_TOKEN", SECRET)
    endpoint = UrlConnector("https://user:pw@x.invalid/", "H48_TOKEN").start(tmp_path)
    assert (endpoint.base_url, endpoint.token, endpoint.alt_token) == (
        "https://user:pw@x.invalid",
        SECRET,
        None,
    )
    assert UrlConnector("https://user:pw@x.invalid", "H48_TOKEN").what == "https://x.invalid"


@pytest.mark.parametrize("wait", [True, False])
def test_a_reference_endpoint_answers_until_stopped(tmp_path: Path, wait: bool) -> None:
    endpoint = ReferenceConnector(wait=wait, tokens=(SECRET,)).start(tmp_path)
    endpoint.ready()
    headers = {"Authorization": f"Bearer {SECRET}"}
    answer = httpx.post(f"{endpoint.base_url}/api/ai/threads/search", json={}, headers=headers)
    assert answer.status_code == 200
    endpoint.stop()
    with pytest.raises(httpx.TransportError):
        httpx.post(f"{endpoint.base_url}/api/ai/threads/search", json={}, headers=headers)


def test_a_named_server_of_no_such_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConnectError, match="no mutant named 'nothing-broken'"):
        MutantConnector("nothing-broken").start(tmp_path)
    assert connectors.NAMED.keys() == {"mutant", "variant"}
