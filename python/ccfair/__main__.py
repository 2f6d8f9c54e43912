"""``python -m ccfair``: the command-line interface."""

import sys

from ccfair.cli import main

sys.exit(main())
