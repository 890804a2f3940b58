"""The engine's hash functions, taken from CPython's own hash modules rather than through ``hashlib``.

``import hashlib`` loads OpenSSL's libcrypto to offer its algorithms: 2.5 ms of CPU in every process, a
fiftieth of a warm check, spent before the first digest. The engine needs two algorithms that CPython builds
in, the modules ``hashlib`` itself falls back to without OpenSSL: BLAKE2b (content digests, cache names and
checksums; as fast as OpenSSL's SHA-1) and SHA-256 (the findings' fingerprints, a few bytes each: the same
digests whichever module computes them). An interpreter built without them gets ``hashlib``'s.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def _built_in(name: str, *modules: str) -> Callable[..., Any]:
    """``name`` from the first of ``modules`` there is, else from ``hashlib``."""
    for module in modules:
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
    import hashlib

    return getattr(hashlib, name)


blake2b = _built_in("blake2b", "_blake2")
sha256 = _built_in("sha256", "_sha2", "_sha256")  # _sha2 from CPython 3.12, _sha256 before


def content_digest(data: bytes) -> str:
    """The digest that names a text's version everywhere in the engine (summaries, results, cache keys)."""
    return blake2b(data, digest_size=20).hexdigest()
