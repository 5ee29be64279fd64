"""The http room: the one door to the target. Every request of the suite goes out through a client
built in clients.py from the run's one policy, and every answer comes back through the door's
bounds; what the doors see they record, and judge nothing.

- policy.py: what every request carries and waits for (headers, TLS, rate limit, throttling
  waited out, a dropped connection sent again), built from the settings;
- clients.py: every client of the target (httpx and requests), built from the policy;
- answer_bounds.py, requests_bounds.py: the bounds every answer is read under (deadline, size,
  complete message), for httpx and for requests (schemathesis' sessions);
- sse.py: the event-stream reader; strictjson.py: JSON as RFC 8259 reads it;
- exchange.py: one request and its answer as evidence (excerpt, curl line);
- running_test.py: the running test's one scope (its exchanges, what the doors observed, its
  polling loop); runs_in_flight.py: the suite's runs in flight (RunLoad: bounded, each followed
  to its end);
  trail.py: an exchange as the trail keeps it; observe.py: what the doors saw for the
  judge (faults raised, observations recorded);
- target.py: the target and its pre-flight; absent.py: an answer saying its operation is not
  implemented (the pre-flight's word, and the judge's).

May import: config.
"""
