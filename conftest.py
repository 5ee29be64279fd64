"""Registers the conformance suite's pytest plugin for this project."""

pytest_plugins = ["assistant_conformance.suite.plugin"]
