"""``python -m rankwise``: the ``rankwise`` command."""

from rankwise.cli.main import main

main()
