"""The contract, shipped with the suite: the interface document (interface.md), its OpenAPI
rendering (openapi.yaml) and the requirement catalogue (requirements.yaml). Installed as the
package `assistant_conformance.spec`; read with importlib.resources (report/bundle.py)."""
