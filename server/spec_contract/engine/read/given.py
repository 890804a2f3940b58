"""Paths the user gives (an option's value, a launch line's model), made into paths the tool can ask about.

pathlib raises, instead of answering, for some names: ``~nosuchuser/…`` (``expanduser``: RuntimeError), a
component longer than the file system takes (``is_dir``, ``is_file``: OSError ENAMETOOLONG), a folder it may
not search (EACCES), a NUL byte (ValueError). Every option that names a file or folder goes through
:func:`given_path` before anything asks about it, so such a name is one line and exit 2 wherever it is
given, instead of a traceback in whichever command met it first.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from spec_contract.engine.config import ConfigError


def given_path(text: str, what: str = "") -> Path:
    """``text`` with a leading ``~`` or ``~user`` expanded; a one-line ConfigError naming ``what`` (the option,
    if any) when it cannot name a file at all. A name that merely does not exist is returned: the caller says
    what it expected there."""
    named = f"{what} {text}" if what else text
    expanded = os.path.expanduser(text)
    if text.startswith("~") and expanded == text:  # os.path.expanduser leaves an unknown user's ~ as it is
        user = text[1:].split(os.sep, 1)[0]
        raise ConfigError(f"{named}: cannot expand ~{user} (" +
                          (f"no user {user!r})" if user else "no home directory)"))
    try:
        os.lstat(expanded)
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as exc:
        why = "a symlink loop" if exc.errno == errno.ELOOP else exc.strerror or type(exc).__name__
        raise ConfigError(f"{named}: {why}") from None
    except ValueError as exc:  # an embedded NUL byte
        raise ConfigError(f"{what} {text!r}".lstrip() + f": not a usable path ({exc})") from None
    return Path(expanded)
