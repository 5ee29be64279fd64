"""Reference server: a complete, persistent implementation of the interface; started on loopback
by embedded.py, and by connectors.py as a target of the suite (with the `url` kind and the
`Connector` protocol every kind of target follows)."""
