"""The evidence room: a finding's exchanges kept, and sent again.

- har.py: a finding's exchanges as HAR 1.2, its stable ID;
- places.py: where each value of a request came from (an earlier answer's body, event, header);
- replay.py: the replayer `assistant-conformance replay` runs: a finding's exchanges sent again
  through the run's clients, its check judged again; resend.py: the sending, exchange by
  exchange (values put in, streams, polls);
- unreplayed.py: what a replay cannot send again as it was, and why.

May import: config, http, judging, safety, flows, property.
"""
