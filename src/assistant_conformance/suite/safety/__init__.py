"""The safety room: what keeps a run to its own data, and removes it afterwards.

- guard.py: owned data only, --read-only, the ledger's intents, a run stopped when the target
  stops answering or refuses its token; it wraps the transports the http room builds;
- ledger.py: what the run created, one file per run; removal.py: removing it, and what stays;
- session.py: the run's safety session (its guard and ledger, the clean-up at the end);
- sweep.py: `--sweep`, what earlier runs left.

May import: config, http.
"""
