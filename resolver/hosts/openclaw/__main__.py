"""``python -m resolver.hosts.openclaw``: the stdio sidecar."""

import sys

from ._sidecar import main

sys.exit(main())
