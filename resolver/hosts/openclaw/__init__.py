"""OpenClaw host: the stdio sidecar the JS extension talks to, and the installer.

Run as ``python -m resolver.hosts.openclaw`` (what the extension starts) or
``resolver serve --stdio``.
"""

from ._sidecar import Sidecar, main, serve

__all__ = ["Sidecar", "main", "serve"]
