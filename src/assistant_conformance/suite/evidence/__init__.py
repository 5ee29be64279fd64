"""The evidence room: a finding's exchanges kept, and sent again.

- har.py: HAR 1.2 written and read back, the project's fields typed: a finding's exchanges and
  its stable ID, the audit proxy's recording, the files the audit and the replay read;
- places.py: where each value of a request came from (an earlier answer's body, event, header);
- replay.py: the replayer `assistant-conformance replay` runs: a finding's exchanges sent again
  through the run's clients, its check judged again; resend.py: the sending, exchange by
  exchange (values put in, streams, polls);
- unreplayed.py: what a replay cannot send again as it was, and why.

May import: config, http, judging, safety, flows, property.
"""
