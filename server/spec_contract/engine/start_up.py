"""Which worker functions run while the server starts, read from who calls them.

A worker function runs at start-up when it is named like one of the profile's ``start-up-methods``
(``__init__``, ``init_*``, … — any segment of its qualified name, so a helper nested in ``init_lm_head``
counts) or when such a function's calls reach it; any other runs when requests arrive. An *entry point*, a
worker function no worker function calls, is called from outside the workers: a fork's executor may build
its drafter in ``__init__`` and call ``drafter.wire_target(model)`` there (tokenspeed 0.1.1). The profile's
``start-up-callers`` files are read for that: their functions' calls only (their uses are no contract's), and
an entry point that a start-up method of theirs calls by name runs at start-up too. The call is matched by
name, since the executor's drafter is picked at run time; only entry points are matched, so a name the
executor also calls at start-up (``forward`` in a warm-up) never moves a function that the workers call per
request.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Iterable, Mapping

from spec_contract.engine.reach import closure
from spec_contract.engine.resolve.index import FunctionKey
from spec_contract.engine.summarise.summary import CallFlow, FunctionFlow, ModuleSummary


def start_up_named(qualname: str, globs: tuple[str, ...]) -> bool:
    match = _one_pattern(globs).match
    return any(match(part) for part in qualname.split("."))


@functools.lru_cache(maxsize=8)
def _one_pattern(globs: tuple[str, ...]) -> re.Pattern[str]:
    """The profile's globs as one pattern: a derivation asks it of each segment of every worker function's name
    (SGLang 0.5.23: some 40 000 ``fnmatchcase`` calls, one per segment and glob); no glob matches nothing."""
    return re.compile("|".join(fnmatch.translate(glob) for glob in globs) or r"(?!)")


def called_at_start_up(callers: Iterable[ModuleSummary], globs: tuple[str, ...]) -> frozenset[str]:
    """The names the start-up methods of ``callers`` call on some object (``self.drafter.wire_target(…)`` →
    ``wire_target``), through their own module's functions they call (``self._build()``, ``helper()``)."""
    names: set[str] = set()
    for summary in callers:
        functions = {fn.qualname: fn for fn in summary.functions}
        frontier = [fn for fn in summary.functions if start_up_named(fn.qualname, globs)]
        seen = {fn.qualname for fn in frontier}
        while frontier:
            fn = frontier.pop()
            for call in fn.calls:
                local = _local_callee(fn, call, functions)
                if local is not None:
                    if local.qualname not in seen:
                        seen.add(local.qualname)
                        frontier.append(local)
                elif len(call.callee) >= 2 and call.callee[-1].isidentifier():
                    names.add(call.callee[-1])
    return frozenset(names)


def _local_callee(fn: FunctionFlow, call: CallFlow, functions: Mapping[str, FunctionFlow]) -> FunctionFlow | None:
    """The caller module's own function a call reaches (``self.x()`` in a method, ``x()``), if it is one."""
    if call.callee[0] == "self" and len(call.callee) == 2 and fn.class_name is not None:
        return functions.get(f"{fn.qualname.rpartition('.')[0]}.{call.callee[1]}")
    return functions.get(call.callee[0]) if len(call.callee) == 1 else None


def start_up_functions(functions: Mapping[FunctionKey, FunctionFlow], globs: tuple[str, ...],
                       called: frozenset[str],
                       targets: Mapping[FunctionKey, list[tuple[CallFlow, FunctionKey, int]]]) -> set[FunctionKey]:
    """The worker functions that run at start-up (see the module docstring): ``called`` is what
    :func:`called_at_start_up` read, ``targets`` each worker function's calls that reach a worker function, with
    the function each reaches."""
    starts = {key for key in functions if start_up_named(key.qualname, globs)}
    if called:
        calls = {callee for out in targets.values() for call, callee, _ in out if call.callee[-1] in called}
        starts |= {key for key in functions if key.qualname.rpartition(".")[2] in called and key not in calls}
    return closure(starts, lambda key: (callee for _, callee, _ in targets[key]))
