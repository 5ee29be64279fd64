"""allure-pytest's listener without a container per parametrize argument (integrations.py)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest
from allure_pytest.listener import AllureListener


def is_argument(fixturedef: Any) -> bool:
    """pytest's stand-in fixture for a parametrize argument (returns `request.param`)."""
    return getattr(fixturedef.func, "__name__", "") == "get_direct_param_fixture_func"


class ArgumentsAreNotFixtures(AllureListener):
    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef: Any, request: Any) -> Generator[None, Any, None]:
        if is_argument(fixturedef):
            yield
            return
        yield from super().pytest_fixture_setup(fixturedef, request)
