"""Where the files a run reads are: in the installed package, whichever way it was installed (from
a wheel, or editable from a checkout, which maps the packages to the checkout's folders). Nothing
reads a path of its own relative to a source file.

- the contract: `assistant_conformance.spec` (interface.md, openapi.yaml, requirements.yaml);
- the checks: `assistant_conformance.tests`, run with the suite's pytest settings (suite/pytest.ini)
  from the folder that holds them (`suite_root`, so that test ids read `tests/test_x.py::...`).
"""

from __future__ import annotations

import os
from functools import cache
from importlib import resources
from pathlib import Path


@cache
def spec_dir() -> Path:
    return Path(str(resources.files("assistant_conformance.spec")))


@cache
def tests_dir() -> Path:
    return Path(str(resources.files("assistant_conformance.tests")))


def suite_root() -> Path:
    """The folder holding `tests/`: the root of a run from the package."""
    return tests_dir().parent


def pytest_ini() -> Path:
    return Path(str(resources.files("assistant_conformance.suite"))) / "pytest.ini"


def user_cache() -> Path:
    """The user's cache folder of the suite (XDG_CACHE_HOME, else ~/.cache): what is kept across
    runs and working folders (Hypothesis' unicode tables, the LangGraph server's venv)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "assistant-conformance"
