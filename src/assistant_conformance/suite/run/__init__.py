"""The run room: what one run keeps and measures, from its start to its reports.

- state.py: the run's state on pytest's stash, a typed key per concern (its setup, what it found
  of the target, a harness error's stop, what it measured, the running test's record);
- recording.py: each test from its set-up to its report's verdict (a plugin object);
- reporting.py: the run's end, its result and reports (a plugin object), and --sweep;
- outcomes.py: pytest's reports into test results, findings deciding each outcome, and the
  suite's NotJudged made pytest's skip (plugin objects);
- results.py: the run's result at its end, results.json, and a merge of shards;
- identity.py: what identifies a run (suite and spec hashes, options); stats.py: what it measured
  (the typed keys of its measurements) summed up;
- concurrency.py: the spread over pytest-xdist workers; shared_reference.py: its one embedded
  reference; forked_workers.py: its workers forked from one process that imported the suite once,
  through worker_standin.py (what xdist starts for each: the standard library only);
- capabilities.py: optional capability groups, declared or probed;
- memory.py: the garbage collector through a run of the suite (off during start-up, start-up's
  objects frozen once collected, no last pass at a process's end), in no other pytest run.

May import: config, http, judging, safety, flows, property, evidence.
"""
