"""A pytest plugin for the self-tests: after collection, dump test → requirement IDs as JSON."""

from __future__ import annotations

import json
import os

import pytest


def pytest_collection_finish(session: pytest.Session) -> None:
    inventory = {
        item.nodeid: [rid for mark in item.iter_markers("req") for rid in mark.args]
        for item in session.items
    }
    with open(os.environ["REQUIREMENT_INVENTORY"], "w", encoding="utf-8") as file:
        json.dump(inventory, file)
