"""What an analysis reads for each path: the editor's buffer for it (an overlay), else the file on disk.

The source store is the one place that reads files for a project, so that a file is read once per analysis
however many steps ask for it, and what is known of a text without reading it is kept: its digest until the
path is touched, and the ``os.stat`` signature a saved run recorded for it (an unchanged signature saves
reading and hashing the file again, as git's index does, so a warm run reads almost nothing).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from spec_contract.engine.read.files import MAX_FILE_BYTES, decode, read_bytes, text_digest

if TYPE_CHECKING:
    from spec_contract.engine.summarise.scan import StatementMemo

_RACY_NS = 2_000_000_000  # a file written this shortly before it was read may change again unseen

# the problems of a read (``files.ReadResult``) that leave a file the run needs unread, and the words for them
_UNREAD = {"unreadable": "cannot be read", "too-large": f"over the {MAX_FILE_BYTES // 2**20} MiB size limit"}

Signature = tuple[int, int, int]
Read = tuple[str | None, str, str | None]  # text (None: none usable), digest, why there is no text


def signature(path: str) -> Signature | None:
    """What changes when a file is written: size, modification time, inode (replaced by an atomic save)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns, stat.st_ino


class Sources:
    """The editor buffers and the files of one project, as the analyses read them."""

    def __init__(self) -> None:
        self.overlays: dict[str, str] = {}
        self.dirty: set[str] = set()  # paths touched since the last whole analysis
        self._memos: dict[str, StatementMemo] = {}  # per editor buffer: its statements, parsed once each
        self._digests: dict[str, str] = {}  # path → digest of the text last read, until the path is touched
        # Files read by the running analysis (None between analyses: an editor query reads the disk afresh
        # and changes no state).
        self._reads: dict[str, Read] | None = None
        # path → (signature, digest) from the saved results
        self._signatures: dict[str, tuple[Signature, str]] = {}
        # path → (signature, when it was taken) of files hashed in this process, for the next save
        self._hashed: dict[str, tuple[Signature, int]] = {}
        # path → why its last read in an analysis gave no text (see _UNREAD), kept until it is read again: a
        # later analysis that keeps what the first derived from it (a language server's) does not read it again
        self._unread: dict[str, str] = {}

    # what changed ------------------------------------------------------------------------------------
    def set_overlay(self, path: str, text: str) -> bool:
        """Analyse ``text`` for ``path`` instead of the file; returns whether that changed anything."""
        # A byte order mark is not Python (``ast.parse`` rejects U+FEFF): drop it, as reading the file does
        # (``files.decode``), so a buffer and the file it was opened from are analysed alike.
        text = text.removeprefix("\ufeff")
        if self.overlays.get(path) == text:
            return False
        self.overlays[path] = text
        self.touch(path)
        return True

    def clear_overlay(self, path: str) -> bool:
        """Read ``path`` from the disk again; returns whether it had a buffer."""
        if self.overlays.pop(path, None) is None:
            return False
        self._memos.pop(path, None)
        self.touch(path)
        return True

    def touch(self, path: str) -> None:
        """Whatever was known of ``path``'s text is stale."""
        self.dirty.add(path)
        self._digests.pop(path, None)
        self._signatures.pop(path, None)
        self._hashed.pop(path, None)

    # reading -----------------------------------------------------------------------------------------
    @contextmanager
    def reading(self) -> Iterator[None]:
        """One analysis: each file is read at most once inside, and read again by the next one."""
        self._reads = {}
        try:
            yield
        finally:
            self._reads = None

    def memo(self, path: str) -> StatementMemo | None:
        """The statements of an editor buffer, kept between keystrokes (None for a file on disk)."""
        from spec_contract.engine.summarise.scan import StatementMemo  # an editor's: the parser's own
        return self._memos.setdefault(path, StatementMemo()) if path in self.overlays else None

    def text(self, path: str) -> Read:
        """Text, digest and problem of what the analysis reads for ``path``: the editor buffer or the file.

        During an analysis a file is read once, however many steps ask (the registry filter, the summary,
        the digest that validates saved results), and its digest and signature are recorded.
        """
        if path in self.overlays:  # its digest is kept until the buffer changes (several steps ask per keystroke)
            return self.overlays[path], self.digest(path), None
        if self._reads is None:
            result = decode(read_bytes(path))
            return result.text, result.digest, result.problem
        read = self._reads.get(path)
        if read is None:
            read_at = time.time_ns()
            before = signature(path)
            result = decode(read_bytes(path))
            read = self._reads[path] = (result.text, result.digest, result.problem)
            self._digests[path] = result.digest
            if result.problem in _UNREAD:
                self._unread[path] = _UNREAD[result.problem]
            else:
                self._unread.pop(path, None)
            # not written to while read; a file with no usable text is read again next run, as an unreadable
            # one is: a warm run must meet it to say it was skipped
            if before is not None and before == signature(path) and result.text is not None:
                self._hashed[path] = (before, read_at)
        return read

    def digest(self, path: str) -> str:
        """Digest of the text the analysis would read now (the editor buffer or the disk)."""
        if path not in self._digests:
            if path in self.overlays:
                self._digests[path] = text_digest(self.overlays[path])
            elif (known := self._signatures.get(path)) is not None and known[0] == signature(path):
                self._digests[path] = known[1]
            else:
                self._digests[path] = self.text(path)[1]
        return self._digests[path]

    def unreadable(self) -> dict[str, str]:
        """The files whose last read could not be made, with why: those that could not be opened and those over
        the size limit (a binary file or a FIFO was read, and is only skipped); an editor buffer is read."""
        return {path: why for path, why in self._unread.items() if path not in self.overlays}

    # the saved signatures ----------------------------------------------------------------------------
    @property
    def unsaved(self) -> bool:
        """Whether ``to_save`` would save a signature not saved yet. A file read again with the signature
        and digest it was saved with adds nothing (every run reads the engine package's ``__init__.py``
        before the saved signatures are restored: counting it would write a warm run's results again)."""
        return any(self._saved(path, taken, read_at) != self._signatures.get(path)
                   for path, (taken, read_at) in self._hashed.items() if self._saved(path, taken, read_at))

    def _saved(self, path: str, taken: Signature, read_at: int) -> tuple[Signature, str] | None:
        """The signature ``to_save`` keeps for a file hashed in this process, or None."""
        # A file written shortly before it was read may be written again within its timestamp's granularity
        # (a few ms here, seconds on some filesystems) without a new signature: hash it again next time rather
        # than trust its signature (git's "racy" entries). (A file that could not be read is tried again each
        # run: a chmod changes no signature.)
        if taken[1] < read_at - _RACY_NS and self._digests.get(path):
            return taken, self._digests[path]
        return None

    def restore(self, signatures: dict[str, tuple[Signature, str]]) -> None:
        self._signatures = signatures

    def to_save(self) -> dict[str, tuple[Signature, str]]:
        """The signatures to save: the restored ones plus those of the files hashed since."""
        for path, (taken, read_at) in self._hashed.items():
            if (saved := self._saved(path, taken, read_at)) is not None:
                self._signatures[path] = saved
        self._hashed = {}
        return self._signatures
