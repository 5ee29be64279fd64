"""The proof room: the evidence that the suite's verdicts are right.

- mutants/: deliberately broken servers, each a small ASGI middleware around the reference that
  breaks one requirement (named in its docstring and its registry entry);
- variants/: servers that differ from the reference only where the contract leaves room;
- killtable.py, killreport.py: the suite against every mutant (it must catch each, by exactly its
  requirement IDs) and every variant (it must pass each), and the table that says so;
- foreign.py, langgraph/: a real LangGraph Agent Server, written by others, as a target;
- connectors.py: the table of kinds of target (url, reference, mutant, variant, a named foreign
  server), each started by one connector;
- serve.py (`assistant-reference`), suiterun.py, forks.py: serving any of them; the suite in a child
  process against one (`run_suite`), forked from one that imported the suite once where the
  platform forks.
"""
