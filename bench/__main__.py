"""``python -m bench [--quick] [--only NAME,...] [--runs N] [--out FILE]``."""

import sys

from bench.suite import main

sys.exit(main())
