"""``python -m generator``: the bcfg command line."""

import sys

from .cli import main

sys.exit(main())
