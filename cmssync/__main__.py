from __future__ import annotations

import sys

from cmssync.cli import main

sys.exit(main())
