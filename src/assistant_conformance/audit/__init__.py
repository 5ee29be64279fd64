"""The audit room: judging traffic the suite did not send, with the suite's own words.

- capture.py: a file's (or a proxy session's) exchanges as the suite's trail holds them, with
  whose credential each request carried and what the answers say of each token;
- harfile.py: a HAR file read as browsers, proxies and libraries write it, within bounds (its
  entries read by suite/evidence/har.py);
- operations.py: which documented operation an exchange is (method and path template, the
  `/api/ai` prefix or a base path), the run a stream is of, the documented response shapes;
- exchange.py: what one exchange shows (status, bearer rule, 401s, JSON, shapes, streams, 5xx);
- sequence.py: what a sequence in the file shows (a read after a delete, a patch read back, a
  stream resumed by `last-event-id`, the suite's own declared checks), from indexes by resource;
- judge.py: those judgements as checks (suite/judging/checks.py's words) evaluated into findings;
- rules.py: each exchange judged with what came before it, and what is kept of the findings;
- outcome.py: the findings as a run's verdicts and reports (report/), JUnit included;
- recorder.py, proxy.py and session.py: the live reverse proxy that records as it passes, and
  its session, which judges on a thread of its own and writes the recording.

It imports the suite and the report rooms; nothing but the command imports it.
"""
