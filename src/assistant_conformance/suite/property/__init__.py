"""The property layer: schemathesis over spec/openapi.yaml, stateless and stateful.

- generation.py: the document loaded once; the run's seed and depth as its configuration;
- compat.py: every piece of schemathesis' internals the layer relies on, in one place;
- runner.py: sends cases through the run's door and turns check failures into findings (which
  requirement each is charged to: suite/judging/schemathesis_charges.py);
- judge.py: the first few distinct findings per requirement, and the controlled ones held back
  until the operation's control is known;
- cases.py: whether a generated positive body is one the document lets the suite judge (which
  rule a negative case broke: suite/judging/negations.py);
- owned_bodies.py: a generated Knowledgebase body made to claim only what the suite owns;
- replayed.py: a finding's check in words a replay judges again (schemathesis' checks rerun);
- probes.py: requests added on live resources (a required query parameter left out, a GET
  after a DELETE);
- scope.py: the checks run, and the requirements a property test may name;
- stateful.py: the links as state machines.

Used by tests/property/test_property.py (one pytest item per operation) and
tests/property/test_stateful.py. (This file imports none of them: importing one module of the layer
loads only what it needs.)

May import: config, http, judging, safety, flows.
"""
