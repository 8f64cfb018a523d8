"""``python -m rankwise``: the ``rankwise`` command."""

from rankwise.cli.entry import main

main()
