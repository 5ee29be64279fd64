"""The contract room: what the interface says, read the same way by everyone (the suite, the
reports, the reference, the proof and the audit).

- openapi.py: spec/openapi.yaml's operations as a table (method, path, success status, body,
  parameters, the requirements a finding on each is charged to) and sample requests of them;
- catalogue.py: the requirement catalogue (spec/requirements.yaml): IDs, levels, statements;
- files.py: where the packaged files are (spec/, tests/, the suite's pytest.ini, the user's
  cache), each spec file read once per process, and their hashes.

It imports no room of the package; every room may import it.
"""
