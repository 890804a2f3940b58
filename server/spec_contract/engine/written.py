"""The files the tool writes when asked to (``check --write-baseline FILE``, ``matrix -o FILE``): only what it
wrote itself is ever replaced, and never half-way.

A FILE argument may name anything: a model file or a ``pyproject.toml`` (a slip of the shell's completion), a
FIFO or a device node (opening one to write blocks, or writes somewhere else), a directory. So the path is
looked at before anything is opened for writing: only a regular file, or nothing, is replaced (through a
symlink, the file it names); a file already there is replaced only when it is one the tool wrote (each writer
says how it knows its own: a baseline parses as one, a matrix starts with its title); and the new text goes to a
temporary file of its own beside it, renamed over it at the end, so readers see the old file or the new one,
a failed write leaves the old one, and two writers at once each have their own. Every refusal is one line.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from spec_contract.engine.config import ConfigError
from spec_contract.engine.read.files import read_bytes

_HEAD_BYTES = 4096  # what a writer needs to see of a file to know its own


def target_of(path: Path, what: str) -> tuple[Path, int | None]:
    """Where writing ``path`` goes (through a symlink, to the file it names) and that file's permissions
    (None: there is no file yet), or a one-line ConfigError when the path names anything but a regular file:
    ``os.replace`` would swap a FIFO, a device node or a directory's name for the new file, and opening one
    to write would block or write elsewhere. Nothing is opened: the path is only looked at."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if not os.path.islink(path):
            return path, None
        named = Path(os.path.realpath(path))  # a symlink to a file not made yet: made there
        if os.path.islink(named):  # still a link: realpath gave up in a loop
            raise ConfigError(f"{what} {path}: a symlink loop") from None
        return named, None
    except OSError as exc:  # a symlink loop, a component that is a file, no permission
        raise ConfigError(f"{what} {path}: cannot write it ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{what} {path}: not a regular file; refusing to replace it")
    return Path(os.path.realpath(path)), stat.S_IMODE(info.st_mode)


def replace(target: Path, text: str, mode: int | None, what: str, path: Path) -> None:
    """Write ``text`` to ``target`` (from :func:`target_of`: ``mode`` is the permissions of the file it replaces,
    None for a new one) through a temporary file of its own and a rename; one-line ConfigError naming ``path``
    when it cannot."""
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            os.fchmod(handle.fileno(), mode if mode is not None else 0o666 & ~_umask())
        os.replace(tmp, target)
    except OSError as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise ConfigError(f"{what} {path}: cannot write it ({exc.strerror or exc})") from None


def write_own(path: Path, text: str, what: str, ours: Callable[[bytes], bool]) -> None:
    """Write ``text`` to ``path``, replacing a file there only when it is empty or ``ours`` says the tool wrote
    it (given the file's first bytes); else a one-line ConfigError, and the file is left as it was."""
    target, mode = target_of(path, what)
    if mode is not None:
        head = read_bytes(str(target), _HEAD_BYTES)  # without blocking: it may have become a FIFO since
        if isinstance(head, str):
            raise ConfigError(f"{what} {path}: cannot read it ({'not a regular file' if head == 'not-a-file' else head})")
        if head.strip() and not ours(head[:_HEAD_BYTES]):
            raise ConfigError(f"{what} {path}: not a {what} spec-contract wrote; refusing to replace it (name a new "
                              "file, or remove this one)")
    replace(target, text, mode, what, path)


def _umask() -> int:
    """The process's umask, for a new file's permissions (mkstemp makes it private)."""
    current = os.umask(0o022)
    os.umask(current)
    return current
