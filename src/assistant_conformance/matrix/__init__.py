"""The compatibility matrix: the suite run against several implementations, one grid of
requirements by targets (`assistant-conformance matrix FILE`, cli/matrix.py).

targets.py reads the targets file (each target's connector from proof/connectors.py's table of
kinds), runner.py starts each and runs the suite against it (proof/suiterun.py's `run_suite`),
grid.py builds matrix.json, and page.py and markdown.py render it.
"""
