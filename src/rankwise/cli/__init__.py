"""The ``rankwise`` command."""
