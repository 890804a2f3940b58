"""The engine's digests come from CPython's own hash modules: the same values as hashlib's, without OpenSSL."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

from spec_contract.engine import digests


def test_the_built_in_hashes_give_hashlibs_digests():
    for size in (0, 1, 63, 64, 65, 1000, 1 << 20):
        data = os.urandom(size)
        assert digests.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
        assert digests.blake2b(data, digest_size=20).hexdigest() == hashlib.blake2b(data, digest_size=20).hexdigest()
        assert digests.content_digest(data) == hashlib.blake2b(data, digest_size=20).hexdigest()


def test_reading_caching_and_fingerprinting_load_no_openssl():
    """What a warm ``check --format json`` imports to read files, its cache and the findings' fingerprints
    leaves ``_hashlib`` (OpenSSL's libcrypto, 2.5 ms to load) unloaded."""
    code = ("import sys; before = '_hashlib' in sys.modules; "
            "import spec_contract.engine.read.files, spec_contract.engine.cache, spec_contract.engine.check.baseline; "
            "print(before, '_hashlib' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False", "False"]
