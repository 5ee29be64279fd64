"""The contract room: what the interface says, read the same way by everyone (the suite, the
reports, the reference, the proof and the audit).

- openapi.py: spec/openapi.yaml's operations as a table (method, path, success status, body,
  parameters, the requirements a finding on each is charged to) and sample requests of them;
- resources.py: the API's kinds of resource, one row each (what creates and deletes one, its id,
  the run's mark in its create and the search that finds it, its capability group and probes,
  the pre-flight's reads), read by the ledger, the removal, the lookup, the probes, the pre-flight;
- catalogue.py: the requirement catalogue (spec/requirements.yaml): IDs, levels, statements;
- files.py: where the packaged files are (spec/, tests/, the suite's pytest.ini, the user's
  cache), each spec file read once per process, and their hashes.

It imports no room of the package; every room may import it.
"""
