"""The suite room: what runs inside a user's pytest (tests/ holds the checks themselves).

- plugin.py, fixtures.py, concurrency.py: the pytest plugin (options, markers, verdicts), its
  fixtures and the spread over pytest-xdist workers; the run's typed state is state.py, kept on
  the config stash under the keys of keys.py;
- settings.py, options.py: the options (command line, environment, ini);
- the doors: transport.py (the one policy every client of the target comes from), door.py (the
  bounds every answer is read under), guard.py (owned data only, the ledger's intents), sse.py
  (the event-stream reader), exchange.py, strictjson.py, target.py. They bound, count and record
  (observe.py) and name no requirement;
- charges.py: the one place that turns what the doors and schemathesis saw into findings;
- findings.py: what a test records of a requirement; collect.py: reports into the result model;
- ledger.py, safety.py, sweep.py: what a run created, and its removal;
- openapi.py (the document's operations), capabilities.py, absent.py (operations a target lacks),
  identity.py, stats.py;
- flows/: the scenario flows, one module per interface area; property/: the schemathesis layer.
"""
