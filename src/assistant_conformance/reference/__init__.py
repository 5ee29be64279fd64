"""Reference server: a complete, persistent implementation of the interface."""
