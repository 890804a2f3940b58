"""Finding the tree's Python files, naming their modules and reading them safely.

Nothing here parses: discovery is a directory walk, and reading decodes bytes with the encoding Python
itself would use (PEP 263 cookie or UTF-8). Files that cannot be analysed (binary, undecodable, huge,
unreadable, symlink loops) are reported with a reason instead of raising, so one bad file never stops a run.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from spec_contract.engine.digests import content_digest
from spec_contract.engine.read.globs import glob_match
from spec_contract.engine.read.listing import Listings, walk

MAX_FILE_BYTES = 4 * 1024 * 1024

_ALWAYS_SKIPPED_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv", ".tox",
                        ".mypy_cache", ".pytest_cache", ".ruff_cache"}


@dataclass(frozen=True)
class SourceFile:
    """One discovered ``.py`` file: where it is and which module it is."""

    path: str  # absolute
    rel: str  # relative to the checked root, '/'-separated
    module: str  # dotted module name derived from __init__.py packages upward


@dataclass(frozen=True)
class ReadResult:
    text: str | None
    digest: str  # content_digest of the bytes; "" when unreadable
    problem: str | None  # why ``text`` is None: "binary", "too-large", "undecodable", "unreadable", "not-a-file"


def module_name(path: Path) -> str:
    """Dotted module name: the file's stem plus every parent directory that is a package."""
    parts = [] if path.stem == "__init__" else [path.stem]
    parent = path.parent
    while (parent / "__init__.py").is_file():
        parts.append(parent.name)
        if parent.parent == parent:
            break
        parent = parent.parent
    return ".".join(reversed(parts))


def discover(root: Path, include: tuple[str, ...] = (), exclude: tuple[str, ...] = (),
             unlisted: dict[str, str] | None = None,
             own_project: Callable[[str], bool] | None = None, nested: list[str] | None = None,
             listings: Listings | None = None) -> list[SourceFile]:
    """Every ``.py`` file under ``root`` (or ``root`` itself), skipping excluded trees and symlink loops.

    Directories that cannot be listed (no permission, an I/O error) are added to ``unlisted`` (path → why):
    what they hold is unknown, so a run that passes over them must say so rather than pass. A folder below
    ``root`` holding a ``pyproject.toml`` for which ``own_project`` says yes is a project of its own (a
    vendored copy with its own ``[tool.spec-contract]``): its tree is not part of this one (its folder is
    added to ``nested``).

    Module names are relative to the import root: the parent of the outermost directory with an
    ``__init__.py`` above the file (checking ``sglang/srt`` still names its files ``sglang.srt.…``). Directories without one below it are namespace packages (SGLang's
    ``srt/models`` is one), so they stay part of the name; files outside any package are named from ``root``.
    ``listings``: the folders the run has listed already (see ``listing``).
    """
    root = root.resolve()
    if root.is_file():
        return [SourceFile(str(root), root.name, module_name(root))]
    found: list[SourceFile] = []
    # Directory globs (``**/.venv/**``) prune the walk; only the others need matching file by file.
    file_excludes = tuple(g for g in exclude if not g.endswith("/**"))
    import_roots: dict[str, str | None] = {}  # directory → the import root its modules are named from (None: none yet)
    seen_dirs: set[tuple[int, int]] = set()
    top = root  # climb while inside a package: a root that is a namespace directory of one counts too
    while ((top / "__init__.py").is_file() or (top.parent / "__init__.py").is_file()) and top.parent != top:
        top = top.parent
    def unreadable(error: OSError) -> None:
        if unlisted is not None and error.filename is not None:
            unlisted[os.fspath(error.filename)] = error.strerror or type(error).__name__

    for dirpath, dirnames, filenames in walk(root, listings, onerror=unreadable, followlinks=True):
        try:
            info = os.stat(dirpath)
        except OSError as error:
            unreadable(error)
            dirnames[:] = []
            continue
        key = (info.st_dev, info.st_ino)
        if key in seen_dirs:  # a symlink loop or a second link to a tree already walked
            dirnames[:] = []
            continue
        seen_dirs.add(key)
        if own_project is not None and "pyproject.toml" in filenames and dirpath != str(root) \
                and own_project(dirpath):
            dirnames[:] = []
            if nested is not None:
                nested.append(dirpath)
            continue
        rel_dir = dirpath[len(str(root)) + 1:].replace(os.sep, "/")
        rel_dir = rel_dir + "/" if rel_dir else ""
        dirnames[:] = sorted(d for d in dirnames if d not in _ALWAYS_SKIPPED_DIRS
                             and not d.endswith(".egg-info")
                             and not glob_match(rel_dir + d + "/", exclude))
        if dirpath == str(root):
            import_root = str(top) if top != root else None
        else:
            import_root = import_roots.get(os.path.dirname(dirpath))
        if import_root is None and "__init__.py" in filenames:
            import_root = os.path.dirname(dirpath)
        import_roots[dirpath] = import_root  # None until a package starts: ``python/`` above ``python/sglang``
        named_from = len(import_root or str(root)) + 1  # where a file's module name starts in its path
        folder = os.path.join(dirpath, "")  # one join per folder, not per file (3,700 on SGLang: 3 ms warm)
        for name in sorted(name for name in filenames if name.endswith(".py")):
            rel = rel_dir + name
            if file_excludes and glob_match(rel, file_excludes):
                continue
            if include and not glob_match(rel, include):
                continue
            full = folder + name
            parts = full[named_from:-3].replace(os.sep, "/").split("/")  # the import root is an ancestor of full
            if parts[-1] == "__init__":
                parts.pop()
            found.append(SourceFile(full, rel, ".".join(parts)))
    return found


def source_for(path: str, root: Path, known: list[SourceFile]) -> SourceFile:
    """A file the walk has not seen (an unsaved editor buffer), named like its neighbours."""
    rel = relative_to(path, root)
    directory = os.path.dirname(path)
    for other in known:
        if os.path.dirname(other.path) == directory and not other.path.endswith("__init__.py"):
            package = other.module.rpartition(".")[0]
            stem = os.path.basename(path)[:-3]
            return SourceFile(path, rel, f"{package}.{stem}" if package else stem)
    return SourceFile(path, rel, module_name(Path(path)))


def read_bytes(path: str, limit: int = MAX_FILE_BYTES) -> bytes | str:
    """The file's bytes (up to one more than ``limit``), or why there are none: "unreadable" (no
    permission, an I/O error, gone) or "not-a-file".

    Only regular files are read. A FIFO, socket or device named ``*.py`` would block ``open`` or ``read``
    forever (and with it the language server's engine thread), so the file is opened without blocking and
    checked with ``fstat`` before anything is read from it.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return "unreadable"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "not-a-file"
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(limit + 1)
    except OSError:
        return "unreadable"
    finally:
        os.close(fd)


def read_text(path: str | Path, limit: int = MAX_FILE_BYTES) -> str:
    """A regular file's UTF-8 text, for what is read whole outside the scan (checkpoint configs, an engine's
    ``_version.py``): ``OSError`` with a one-line ``strerror`` when it is not a regular file (a FIFO would
    block for ever), cannot be read or is over ``limit`` bytes; ``UnicodeDecodeError`` when it is not UTF-8."""
    data = read_bytes(str(path), limit)
    if data == "not-a-file":
        raise OSError(errno.EINVAL, "not a regular file")
    if isinstance(data, str):
        if not os.path.lexists(path):
            raise FileNotFoundError(errno.ENOENT, "no such file", str(path))
        raise OSError(errno.EACCES, "cannot be read")
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit} bytes")
    return data.decode("utf-8")


def decode(data: bytes | str | None) -> ReadResult:
    """Text of a Python source file, or why there is none (``data`` is what :func:`read_bytes` returned)."""
    if data is None or isinstance(data, str):
        return ReadResult(None, "", data or "unreadable")
    digest = content_digest(data)
    if len(data) > MAX_FILE_BYTES:
        return ReadResult(None, digest, "too-large")
    if b"\0" in data:
        return ReadResult(None, digest, "binary")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return ReadResult(None, digest, "undecodable")
    if text.startswith("\ufeff"):
        text = text[1:]
    return ReadResult(text, digest, None)


def text_digest(text: str) -> str:
    return content_digest(text.encode("utf-8", "surrogatepass"))


def relative_to(path: str, root: Path) -> str:
    """``path`` relative to ``root`` ('/'-separated), or ``path`` itself when it is elsewhere.

    Both are absolute and resolved already (discovery resolves the root), so this is string work: a report
    asks it once per call site, thousands of times on a large tree.
    """
    prefix = str(root).rstrip(os.sep) + os.sep
    if path.startswith(prefix):
        return path[len(prefix):].replace(os.sep, "/")
    try:
        return PurePosixPath(Path(path).resolve().relative_to(root.resolve())).as_posix()
    except ValueError:
        return path
