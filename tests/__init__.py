"""The conformance suite's checks, one module per interface section. Installed with the package as
`assistant_conformance.tests` and run by `assistant-conformance run` from any directory (or by
`pytest` in a checkout)."""
