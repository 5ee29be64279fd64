"""The audit room: judging traffic the suite did not send, with the suite's own words.

- capture.py: a HAR file's exchanges as the suite's trail holds them (or the proxy's, as it
  records), with whose credential each request carried;
- operations.py: which documented operation an exchange is (method and path template, the
  `/api/ai` prefix or a base path), the run a stream is of, the documented response shapes;
- exchange.py: what one exchange shows (status, bearer rule, 401s, JSON, shapes, streams, 5xx);
- sequence.py: what a sequence in the file shows (a credential refused before, a read after a
  delete or a patch, a stream resumed by `last-event-id`, the suite's own declared checks);
- judge.py: those judgements as checks (suite/judging/checks.py's words) evaluated into findings;
- outcome.py: the findings as a run's verdicts and reports (report/), JUnit included;
- recorder.py and proxy.py: the live reverse proxy that records and judges as it passes.

It imports the suite and the report rooms; nothing but the command imports it.
"""
