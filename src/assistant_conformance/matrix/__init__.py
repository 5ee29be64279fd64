"""The compatibility matrix: the suite run against several implementations, one grid of
requirements by targets (`assistant-conformance matrix FILE`, cli/matrix.py).

targets.py reads the targets file, launch.py makes each target ready, runner.py runs the suite
against each, grid.py builds matrix.json, and page.py and markdown.py render it.
"""
