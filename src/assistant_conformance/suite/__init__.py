"""The suite room: what runs inside a user's pytest (tests/ holds the checks themselves), in rooms
by what they do, from the ground up; a room imports only rooms below it (the `floors` contract
in pyproject.toml holds the order, `lint-imports` checks it):

1. config/: the options, as plain data;
2. http/: the one door to the target: the policy, every client, the bounds, the trail;
3. judging/: findings and what charges them; safety/: guard, ledger, clean-up (side by side,
   neither imports the other);
4. flows/: the scenario flows, one module per interface area;
5. property/: the schemathesis layer;
6. evidence/: a finding's exchanges as HAR, and their replay;
7. run/: the run's state, results, identity, measurements;
8. plugin.py (the pytest plugin: options, markers, verdicts, reports) and fixtures.py (the
   target, the clients of each principal, the capability gate), over all of them.

Beside the suite, every room reads the contract room (assistant_conformance/contract/).
"""
