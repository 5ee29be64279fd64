"""The scenario checks: one module per interface section, each test naming the requirements it
checks (@pytest.mark.req)."""
