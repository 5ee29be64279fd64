"""Conformance suite for the AI assistant backend HTTP API."""

__version__ = "0.1.0"
