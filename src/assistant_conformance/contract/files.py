"""Where the files a run reads are, and reading them: in the installed package, whichever way it was
installed (from a wheel, or editable from a checkout, which maps the packages to the checkout's
folders). Nothing reads a path of its own relative to a source file.

- the contract: `assistant_conformance.spec` (interface.md, openapi.yaml, requirements.yaml);
- the checks: `assistant_conformance.tests`, run with the suite's pytest settings (suite/pytest.ini)
  from the folder that holds them (`suite_root`, so that test ids read
  `tests/scenario/test_x.py::...`).
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml


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


SPEC_DIR = spec_dir()
CATALOGUE_PATH = SPEC_DIR / "requirements.yaml"
OPENAPI_PATH = SPEC_DIR / "openapi.yaml"


@cache
def read_yaml(path: Path) -> Any:
    """A spec file, parsed once per process (libyaml's parser where PyYAML has it: ten times
    faster, and every pytest-xdist worker parses the spec)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(path.read_text(encoding="utf-8"), Loader=loader)


def sha256(path: Path) -> str:
    """A spec file's hash, as reports state it."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def spec_hashes() -> dict[str, str]:
    return {"openapi_sha256": sha256(OPENAPI_PATH), "requirements_sha256": sha256(CATALOGUE_PATH)}
