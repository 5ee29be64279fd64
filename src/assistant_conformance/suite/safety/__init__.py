"""The safety room: what keeps a run to its own data, and removes it afterwards.

- guard.py: owned data only, --read-only, a run stopped when the target stops answering or
  refuses its token; guarded.py: the guard and the ledger around a principal's clients (what
  suite/http/clients.py puts between a client and the door, in both stacks);
- ledger.py: what the run created, one file per run; removal.py: removing it, and what stays;
  lookup.py: the run's mark in what it creates, and finding what an unanswered create made;
  budget.py: the run's budget of what it makes and cannot remove (a chat-kit session);
- session.py: the run's safety session (its guard and ledger, the clean-up at the end);
- sweep.py: `--sweep`, what earlier runs left.

May import: config, http.
"""
