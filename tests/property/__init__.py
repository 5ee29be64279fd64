"""The property checks: schemathesis over spec/openapi.yaml, one test per operation
(test_property.py) and one state machine per chain of the document's links (test_stateful.py)."""
