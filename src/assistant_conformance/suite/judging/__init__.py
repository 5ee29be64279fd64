"""The judging room: findings, and the one place each kind of evidence becomes one.

- findings.py: what a test records of a requirement (expect, require, judge), the running test's
  record, and a rejection judged only beside an accepted control;
- schemathesis_charges.py: a schemathesis check failure charged to its requirement;
  negations.py: which rule of the document a negative case broke;
- answer_charges.py: what the doors saw (faults, observations, absent operations) charged;
- checks.py: checks as data, judged by the same words in a test, a replay and the audit;
- error_bodies.py: an error object under a success status; idle_reads.py: what differs between
  two reads of a resource left alone.

May import: config, http.
"""
