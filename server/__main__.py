"""``python -m server`` runs the same command line as the ``kropki-server`` script."""

from server.cli import main

raise SystemExit(main())
