"""``python -m pathpool`` runs the ``pathpool`` command."""

import sys

from .cli import main

sys.exit(main())
