"""The speculative algorithms a release has, and which of them a test can select: read from the release.

A release says which algorithms it runs in one place: SGLang in an ``Enum`` (``SpeculativeAlgorithm``: EAGLE,
EAGLE3, … and NONE, as a class or with the functional ``Enum("…", [...])``; 0.5.6 in a class whose names are
registered at import time, read by :mod:`~spec_contract.engine.resolve.algorithm_registry`), vLLM in a ``Literal``
alias of the speculative config's ``method`` (``"eagle3"``, ``"dflash"``, the MTP model types, …). The profile
names that place (``algorithm-names``, dotted in the engine package); the names, the predicates beside them (``def
is_eagle(self): return self in (EAGLE, EAGLE3)``, or in a family the module names, ``_EAGLE_FAMILY = frozenset(…)``; ``def use_dflash(self): return self.method == "dflash"``) and the
engine's spellings (an option compared with ``"NEXTN"`` and set to ``"EAGLE"``; vLLM's MTP model types, all set to
``"mtp"``; argparse's ``choices``) are read from the text, never run. Names are compared in upper case (vLLM's
methods are lower case): ``EAGLE3`` is the algorithm a launch names ``eagle3``.

What a worker line serves is then the algorithms whose runs can make the tests it sits under true
(:class:`Selectors`, over the formulas :mod:`~spec_contract.engine.summarise.selectors` keeps): a predicate
of the release, a flag a worker sets only under some test (``config.dflash_use_aux_hidden_state = True`` under
``if spec_algorithm.is_dflash_family()``), or a comparison with a name. A word the release does not define
may be true in any run.

A release whose place holds nothing readable (a fork that moved it, a small tree shaped like the engine) falls
back on the profile's ``[[algorithms]]`` as written (names, the files only their runs use, the words that
select them): then the algorithms are the profile's word, and a note says so.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Callable, Iterable, Mapping

from spec_contract.engine.config import Config
from spec_contract.engine.read.files import glob_match
from spec_contract.engine.resolve.algorithm_drafts import restricted_drafts
from spec_contract.engine.resolve.algorithm_registry import registered_names, tag_predicate
from spec_contract.engine.resolve.index import Index
from spec_contract.engine.results import NO_ALGORITHM, Algorithms
from spec_contract.engine.summarise.selectors import Formula, returned
from spec_contract.engine.summarise.summary import FunctionFlow, ModuleSummary


def names_paths(config: Config, index: Index, workers: Iterable[ModuleSummary],
                text_of: Callable[[str], str | None] = lambda path: None) -> list[tuple[str, str]]:
    """(path, name) of each place the profile's ``algorithm-names`` say the release names its algorithms: the
    dotted module when the tree has it, else a worker module defining that name at its top (a fork that moved
    the enum: ``minisgl/speculative/spec_info.py`` for ``sglang.srt.speculative.spec_info``), as a class, an
    alias, or any other value assigned to it there (``text_of`` reads the module: ``Enum("…", [...])``)."""
    workers = list(workers)
    out = []
    for dotted in config.algorithm_names:
        module, _, name = dotted.rpartition(".")
        path = index.path_of(index.engine_module(module))
        if path is None:
            assigned = re.compile(rf"^{re.escape(name)}[ \t]*(?::[^=\n]*)?=(?!=)", re.M)
            path = next((w.path for w in workers if w.has_class(name)
                         or any(alias == name for alias, _ in w.assignments)
                         or assigned.search(text_of(w.path) or "") is not None), None)
        if path is not None:
            out.append((path, name))
    return out


def _families(tree: ast.Module) -> dict[str, ast.expr]:
    """The module's top-level collections (``_EAGLE_FAMILY = frozenset({Algo.EAGLE, Algo.EAGLE3})``): what a
    predicate's ``self in _EAGLE_FAMILY`` names. A name the module binds again or changes (``|=``, ``.add(…)``) is
    none: its first value is not what a run sees."""
    found = {stmt.targets[0].id: stmt.value for stmt in tree.body
             if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
             and isinstance(stmt.value, (ast.Tuple, ast.List, ast.Set, ast.Call))}
    changed = [node.id for stmt in tree.body if not isinstance(stmt, ast.ClassDef) for node in ast.walk(stmt)
               if isinstance(node, ast.Name) and (not isinstance(node.ctx, ast.Load) or isinstance(stmt, ast.Expr))]
    return {name: value for name, value in found.items() if changed.count(name) <= 1}


def _with_families(method: ast.FunctionDef, families: dict[str, ast.expr]) -> ast.FunctionDef:
    """``method`` with each ``… in <family>`` written as ``… in <its value>`` (a copy, only when it has one)."""
    if not families or not any(isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn))
                               and isinstance(node.comparators[0], ast.Name) and node.comparators[0].id in families
                               for node in ast.walk(method)):
        return method
    method = copy.deepcopy(method)
    for node in ast.walk(method):
        if isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
                and isinstance(node.comparators[0], ast.Name) and node.comparators[0].id in families:
            node.comparators = [families[node.comparators[0].id]]
    return method


def read_algorithms(config: Config, places: list[tuple[str, str]], text_of: Callable[[str], str | None],
                    option_files: Iterable[str]) -> Algorithms:
    """The algorithms of the tree (see the module docstring), read at ``places`` (see :func:`names_paths`);
    ``option_files``: the paths the profile's ``algorithm-option-files`` globs name, where the engine reads the
    option a launch names one in."""
    names: list[str] = []
    literals: dict[str, tuple[str, ...]] = {}
    predicates: dict[str, Formula] = {}
    where: tuple[str, int] | None = None
    for path, name in places:
        text = text_of(path)
        tree = _parse(text) if text is not None else None
        if tree is None:
            continue
        found = _names_in(tree, name, literals)
        tags: dict[str, list[str]] = {}
        if found is None:  # a class that registers its algorithms at import time (``resolve.algorithm_registry``)
            registered, tags = registered_names(tree, name)
            line = next((n.lineno - 1 for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)
            found = (line, registered) if registered and line is not None else None
        if found is None:
            continue
        line, found_names = found
        names += [n for n in found_names if n not in names]
        where = where or (path, line)
        families = _families(tree)
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                for method in node.body:
                    if isinstance(method, ast.FunctionDef) and len(method.args.args) == 1:
                        formula = returned(_with_families(method, families).body) or tag_predicate(method, tags)
                        if formula is not None:
                            predicates.setdefault(method.name, formula)
    if not names:
        return declared_algorithms(config)
    spellings = {n.upper(): n.upper() for n in names}
    choices: tuple[str, ...] | None = None
    drafts: dict[str, tuple[tuple[str, ...], tuple[str, int]]] = {}  # as written
    for path in option_files:
        text = text_of(path)
        if text is None or config.algorithm_option not in text:
            continue
        for value, (architectures, line) in restricted_drafts(text, config.algorithm_option).items():
            drafts.setdefault(value, (tuple(sorted(architectures)), (path, line)))
        for alias, meant in _aliases(text, config.algorithm_option, literals):
            spellings[alias.upper()] = meant.upper()  # read as another: no algorithm of its own
        found_choices = _choices(text, config.algorithm_option)
        if found_choices is not None and choices is None:
            choices, line = found_choices
            where = (path, line)
            for choice in choices:
                spellings.setdefault(choice.upper(), choice.upper())
    canonical = {spelled: _follow(spellings, spelled) for spelled in spellings}
    universe = frozenset(canonical.values())
    shown = tuple(dict.fromkeys(n for n in canonical.values() if n != NO_ALGORITHM))
    literal_names = tuple((alias, tuple(dict.fromkeys(canonical[s.upper()] for s in strings)))
                          for alias, strings in sorted(literals.items())
                          if strings and all(s.upper() in canonical for s in strings))  # the names' own aliases
    restricted = {canonical[value.upper()]: found for value, found in drafts.items() if value.upper() in canonical}
    return Algorithms(shown, universe, tuple(sorted(canonical.items())), literal_names,
                      tuple(sorted(predicates.items())), where, choices,
                      drafts=tuple(sorted((name, *found) for name, found in restricted.items())))


def declared_algorithms(config: Config) -> Algorithms:
    """The profile's ``[[algorithms]]`` as the algorithms (see the module docstring): their words select them
    (and the algorithms whose ``gated-by`` names them), their files are theirs; every other line serves every
    run, which the base algorithm ``EAGLE`` stands for."""
    names = tuple(dict.fromkeys(("EAGLE", *(a.name.upper() for a in config.algorithms))))
    predicates: dict[str, Formula] = {}
    for spec in config.algorithms:
        runs = [spec.name.upper()] + [other.name.upper() for other in config.algorithms if spec.name in other.gated_by]
        for word in spec.conditions:
            predicates[word] = ("|", *(("=", name) for name in runs))
    files = tuple((spec.name.upper(), spec.files) for spec in config.algorithms if spec.files)
    return Algorithms(names, frozenset(names), tuple((n, n) for n in names), (), tuple(sorted(predicates.items())),
                      files=files, derived=False)


def _follow(spellings: dict[str, str], spelled: str) -> str:
    seen = {spelled}
    while spellings.get(spelled, spelled) != spelled and spellings[spelled] not in seen:
        spelled = spellings[spelled]
        seen.add(spelled)
    return spelled


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # the file's own error is reported with it


def _names_in(tree: ast.Module, name: str, literals: dict[str, tuple[str, ...]]) -> tuple[int, list[str]] | None:
    """(0-based line, names) of the Enum class or Literal alias ``name`` at the top of ``tree``; ``literals``
    gets every Literal alias of the module, by name."""
    aliases = {}
    for node in tree.body:
        target, value = _assigned(node)
        if target is not None and value is not None and _literal(value) is not None:
            aliases[target] = value
    for alias in aliases:
        literals[alias] = tuple(_strings(aliases, alias, set()))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            members = []
            for statement in node.body:
                target, value = _assigned(statement)
                if target is not None and target.isupper() and value is not None \
                        and not isinstance(value, (ast.Lambda, ast.Dict, ast.List)):
                    members.append(target)
            return (node.lineno - 1, members) if members else None
        target, value = _assigned(node)
        if target == name and name in aliases:
            return node.lineno - 1, list(literals[name])
        if target == name and value is not None and (enumerated := _functional_enum(value)):
            return node.lineno - 1, enumerated
    return None


def _functional_enum(value: ast.expr) -> list[str] | None:
    """The members of ``Enum("Name", ["A", "B"])`` (``IntEnum``, ``StrEnum`` …; the names as a list or tuple of
    strings or of ``(name, value)`` pairs, a dict, or one string split at spaces and commas): None otherwise."""
    func = value.func if isinstance(value, ast.Call) else None
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if not called.endswith("Enum") or not isinstance(value, ast.Call) or len(value.args) < 2:
        return None
    names = value.args[1]
    if isinstance(names, ast.Constant) and isinstance(names.value, str):
        return [n for n in re.split(r"[\s,]+", names.value) if n] or None
    elements = names.keys if isinstance(names, ast.Dict) else names.elts \
        if isinstance(names, (ast.List, ast.Tuple)) else []
    found = [e.elts[0] if isinstance(e, ast.Tuple) and e.elts else e for e in elements]
    if found and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in found):
        return [e.value for e in found]  # type: ignore[union-attr]
    return None


def _assigned(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    return None, None


def _literal(value: ast.expr) -> list[ast.expr] | None:
    """The elements of ``Literal[...]`` (``typing.Literal`` too); None for anything else."""
    if not isinstance(value, ast.Subscript):
        return None
    head = value.value
    if not ((isinstance(head, ast.Name) and head.id == "Literal")
            or (isinstance(head, ast.Attribute) and head.attr == "Literal")):
        return None
    inner = value.slice
    return list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]


def _strings(aliases: dict[str, ast.expr], name: str, seen: set[str]) -> list[str]:
    """A Literal alias's strings, those of the aliases it names included."""
    seen.add(name)
    out: list[str] = []
    for element in _literal(aliases[name]) or ():
        if isinstance(element, ast.Constant) and isinstance(element.value, str):
            out.append(element.value)
        elif isinstance(element, ast.Name) and element.id in aliases and element.id not in seen:
            out += _strings(aliases, element.id, seen)
    return out


def _aliases(text: str, option: str, literals: dict[str, tuple[str, ...]]) -> list[tuple[str, str]]:
    """(spelling, name) for each ``if <option> == "A" …: <option> = "B"`` (or ``return "B"``): the engine reads A as
    B (SGLang's NEXTN as EAGLE; vLLM's MTP model types, ``in get_args(MTPModelTypes)``, as ``mtp``)."""
    out = []
    for statement in _if_statements(text, option):
        meant = _set_to(statement.body[-1], option) if statement.body else None
        if meant is None:
            continue
        for spelled in _compared(statement.test, option, literals):
            if spelled.upper() != meant.upper():
                out.append((spelled, meant))
    return out


def _if_statements(text: str, word: str) -> list[ast.If]:
    """The ``if``/``elif`` statements of ``text`` whose test line names ``word``, each parsed alone (the line and
    the lines indented under it): the files are large, the statements few."""
    lines = text.splitlines()
    out = []
    for number, line in enumerate(lines):
        if word not in line:  # most lines: not stripped for nothing
            continue
        stripped = line.lstrip()
        if not stripped.startswith(("if ", "elif ")):
            continue
        indent = len(line) - len(stripped)
        end = number + 1
        while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > indent
                                    or lines[end].lstrip().startswith(")")):
            end += 1
        head = stripped[2:] if stripped.startswith("elif ") else stripped
        body = [part[indent:] if _indent(part) >= indent else part.lstrip() for part in lines[number + 1:end]]
        parsed = _parse("\n".join([head, *body]))
        if parsed is not None and parsed.body and isinstance(parsed.body[0], ast.If):
            out.append(parsed.body[0])
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _set_to(statement: ast.stmt, option: str) -> str | None:
    """``B`` of ``<…>.<option> = "B"`` or ``return "B"``."""
    if isinstance(statement, ast.Return) and isinstance(statement.value, ast.Constant) \
            and isinstance(statement.value.value, str):
        return statement.value.value
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and _names(statement.targets[0], option) \
            and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str):
        return statement.value.value
    return None


def _names(node: ast.expr, option: str) -> bool:
    return (isinstance(node, ast.Name) and node.id == option) or (isinstance(node, ast.Attribute)
                                                                   and node.attr == option)


def _compared(test: ast.expr, option: str, literals: dict[str, tuple[str, ...]]) -> list[str]:
    """The spellings ``test`` is true for when it compares the option with them (``==``, ``in``), through
    ``or`` and ``and`` (a ``!=`` beside them narrows nothing the option can say)."""
    if isinstance(test, ast.BoolOp):
        return [s for value in test.values for s in _compared(value, option, literals)]
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and _names(test.left, option)):
        return []
    right, op = test.comparators[0], test.ops[0]
    if isinstance(op, ast.Eq) and isinstance(right, ast.Constant) and isinstance(right.value, str):
        return [right.value]
    if isinstance(op, ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in right.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if isinstance(op, ast.In) and isinstance(right, ast.Call) and isinstance(right.func, ast.Name) \
            and right.func.id == "get_args" and len(right.args) == 1 and isinstance(right.args[0], ast.Name):
        return list(literals.get(right.args[0].id, ()))
    return []


_CHOICES = re.compile(r"choices\s*=\s*(\[[^\]]*\]|\([^)]*\))")


def _choices(text: str, option: str) -> tuple[tuple[str, ...], int] | None:
    """The argparse ``choices`` of ``--<option>`` (``--speculative-algorithm``), with their 0-based line: a launch
    naming anything else is refused there, before anything loads."""
    flag = '"--' + option.replace("_", "-") + '"'
    at = text.find(flag)
    if at < 0:
        return None
    window = text[at:at + 800]
    end = window.find("add_argument(", 1)
    match = _CHOICES.search(window if end < 0 else window[:end])
    if match is None:
        return None
    try:
        value = ast.literal_eval(match.group(1))
    except (ValueError, SyntaxError):
        return None
    if not all(isinstance(v, str) for v in value):
        return None
    return tuple(value), text.count("\n", 0, at + match.start())


class Selectors:
    """Which algorithms' runs can make a word or a formula true (see the module docstring).

    A word is a predicate of the release (its formula), a worker function returning a formula (a predicate of
    the workers' own), or a flag: every value a worker gives that name, each under the tests it was given
    under. ``may`` is where a formula can be true; ``must`` where it certainly is (only predicates are certain),
    which a negation needs: ``not is_eagle()`` can be true wherever ``is_eagle()`` is not certain.
    """

    def __init__(self, algorithms: Algorithms, functions: Iterable[FunctionFlow]) -> None:
        self.algorithms = algorithms
        self.universe = algorithms.universe
        self._spellings = dict(algorithms.spellings)
        self._literals = dict(algorithms.literals)
        self._predicates: dict[str, list[Formula]] = {}
        for word, formula in algorithms.predicates:
            self._predicates.setdefault(word, []).append(formula)
        # each flag's values as the workers give them, (name, value, selects): kept whole, not taken apart per
        # value here, as only the few hundred words a question reaches are read (of some 12,000 values)
        self._flags: dict[str, list[tuple[str, Formula | None, tuple]]] = {}
        for fn in functions:
            if fn.returns is not None:  # a predicate of the workers' own (``def _is_dspark(self): return …``)
                self._predicates.setdefault(fn.qualname.rpartition(".")[2], []).append(fn.returns)
            for flag in fn.flags:
                self._flags.setdefault(flag[0], []).append(flag)
        # each solved word's (may, must), and each word's definition (None: the workers do not define it); shared
        # with the ``narrowed`` copies, which solve as these do
        self._values: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self._defined: dict[str, tuple[list[Formula], list[tuple[Formula | None, tuple]]] | None] = {}
        self._reached: Mapping[str, frozenset[str]] = {}  # see ``narrowed``

    def selects(self, word: str) -> bool:
        """Whether a test of ``word`` tells runs apart: a predicate of the release, or a flag only some runs set."""
        may, must = self._word(word)
        return bool(must) or may != self.universe

    def runs(self, selects: tuple) -> frozenset[str]:
        """The algorithms whose runs can reach a line under ``selects`` (every formula true there)."""
        found = self.universe
        for formula in selects:
            found = found & self.may(formula)
            if not found:
                break
        return found

    def may(self, formula: Formula) -> frozenset[str]:
        kind = formula[0]
        if kind == "?":
            return self.universe
        if kind == "n":
            return self._word(formula[1])[0]
        if kind == "=":
            return self._named(formula[1])[0]
        if kind == "!":
            return self.universe - self.must(formula[1])
        if kind == "&":
            found = self.universe
            for part in formula[1:]:
                found = found & self.may(part)
            return found
        return frozenset().union(*(self.may(part) for part in formula[1:]))  # "|"

    def must(self, formula: Formula) -> frozenset[str]:
        kind = formula[0]
        if kind == "?":
            return frozenset()
        if kind == "n":
            return self._word(formula[1])[1]
        if kind == "=":
            return self._named(formula[1])[1]
        if kind == "!":
            return self.universe - self.may(formula[1])
        if kind == "&":
            found = self.universe
            for part in formula[1:]:
                found = found & self.must(part)
            return found
        return frozenset().union(*(self.must(part) for part in formula[1:]))

    def _named(self, value: str) -> tuple[frozenset[str], frozenset[str]]:
        """A comparison with ``value``: true exactly for the algorithm it names (a Literal alias: any of its
        names); a value that names none compares something else, which may be anything."""
        if value.startswith("@"):
            names = self._literals.get(value[1:])
            return (frozenset(names), frozenset(names)) if names else (self.universe, frozenset())
        name = self._spellings.get(value.upper())
        return (frozenset((name,)), frozenset((name,))) if name is not None else (self.universe, frozenset())

    def narrowed(self, reached: Mapping[str, frozenset[str]]) -> Selectors:
        """These selectors, where a flag (a word no predicate defines) is true only in the runs ``reached`` says
        reach a function that gives it a value: in any other run it keeps the falsy value it starts with (vLLM's
        ``_share_mtp_indices``, set only in the base proposer's ``_maybe_share_lm_head``, which a DRAFT_MODEL
        run's proposer overrides)."""
        out = copy.copy(self)
        out._reached = reached
        return out

    def _word(self, word: str) -> tuple[frozenset[str], frozenset[str]]:
        """A word's (may, must); a word the workers neither define nor set may be true in any run."""
        may, must = self._solved(word)
        reached = self._reached.get(word) if word not in self._predicates else None
        return (may, must) if reached is None else (may & reached, must & reached)

    def _solved(self, word: str) -> tuple[frozenset[str], frozenset[str]]:
        """A word's (may, must) as its definitions give them, solved on first demand (see ``_solve``)."""
        found = self._values.get(word)
        if found is None:
            if self._definition(word) is None:
                return self.universe, frozenset()
            solver = self
            if self._reached:  # a narrowed copy solves as the selectors it was made from do
                solver = copy.copy(self)
                solver._reached = {}
            solver._solve(word)
            found = self._values[word]
        return found

    def _definition(self, word: str) -> tuple[list[Formula], list[tuple[Formula | None, tuple]]] | None:
        """The predicates of ``word`` and the flag values the workers give it; None when they define neither. A
        value that is the word itself hands it on (``is_last_pp_rank=self.is_last_pp_rank``): only a word the
        workers give some other value is theirs to say; one they only hand on is set elsewhere, to anything."""
        if word not in self._defined:
            itself = ("n", word)
            flags = [(value, selects) for _, value, selects in self._flags.get(word, ()) if value != itself]
            predicates = self._predicates.get(word, [])
            self._defined[word] = (predicates, flags) if predicates or flags else None
        return self._defined[word]

    def _solve(self, root: str) -> None:
        """The (may, must) of ``root`` and of every unsolved word it reads, at any depth: each group of words
        defined through each other (``is_dflash_family`` through ``is_dflash``, whose flag reads
        ``is_dflash_family``) after the words it reads. A word on its own is evaluated once; a group starts from
        nothing and is evaluated again until it stops changing (its least fixed point), at most :data:`_ROUNDS`
        times, after which each word may be whatever any round found and must be only what every round found.
        Only the words a question reaches are solved, each once, in time linear in their definitions per round
        (SGLang 0.5.23's workers define some 3,400 words, and an analysis asks about 400 of them): computed by
        recursion instead, words met again inside their own computation were computed again on every path to
        them, which did not end in an hour there."""
        reads: dict[str, list[str]] = {}
        pending = [root]
        while pending:
            word = pending.pop()
            definition = self._definition(word)
            if word in reads or word in self._values or definition is None:
                continue
            reads[word] = sorted(w for w in _reads(*definition)
                                 if w not in self._values and self._definition(w) is not None)
            pending.extend(reads[word])
        for group in _groups(reads):
            if len(group) == 1 and group[0] not in reads[group[0]]:
                self._values[group[0]] = self._evaluate(group[0])
                continue
            seen: dict[str, list[tuple[frozenset[str], frozenset[str]]]] = {word: [] for word in group}
            for word in group:
                self._values[word] = (frozenset(), frozenset())
            # a word is evaluated again only when a word it reads changed since: its value is a function of theirs,
            # so it would come out the same (SGLang 0.5.23: 1,035 evaluations instead of 1,636, most in a group of
            # 285 words)
            changed_at = dict.fromkeys(group, 0)  # the step each word's value last changed at
            evaluated_at = dict.fromkeys(group, -1)
            step = 0
            for _ in range(_ROUNDS):
                changed = False
                for word in group:
                    step += 1
                    if all(changed_at.get(read, 0) < evaluated_at[word] for read in reads[word]):
                        seen[word].append(self._values[word])
                        continue
                    evaluated_at[word] = step
                    found = self._evaluate(word)
                    seen[word].append(found)
                    if found != self._values[word]:
                        changed = True
                        changed_at[word] = step
                    self._values[word] = found
                if not changed:
                    break
            else:  # it never settled (a negation in the loop): whatever a round allowed
                for word in group:
                    self._values[word] = (frozenset().union(*(may for may, _ in seen[word])),
                                          frozenset.intersection(*(must for _, must in seen[word])))

    def _evaluate(self, word: str) -> tuple[frozenset[str], frozenset[str]]:
        """A defined word's (may, must) from the values the words it reads have now."""
        predicates, flags = self._definition(word) or ([], [])
        may: frozenset[str] = frozenset()
        must: frozenset[str] = frozenset()
        for formula in predicates:
            may |= self.may(formula)
            must |= self.must(formula)
        for value, selects in flags:
            if may == self.universe:  # true in every run already: a name given values all over the workers
                break
            given = self.universe if value is None else self.may(value)
            may |= given & self.runs(selects) if given else frozenset()
        return may, must


_ROUNDS = 32


def _reads(predicates: list[Formula], flags: list[tuple[Formula | None, tuple]]) -> frozenset[str]:
    """The words a definition reads: in its predicates, its flags' values and the tests they are given under."""
    formulas = list(predicates)
    for value, selects in flags:
        if value is not None:
            formulas.append(value)
        formulas.extend(selects)
    out: set[str] = set()
    while formulas:
        f = formulas.pop()
        kind = f[0]
        if kind == "n":
            out.add(f[1])
        elif kind in ("!", "&", "|"):
            formulas.extend(f[1:])
    return frozenset(out)


def _groups(reads: dict[str, list[str]]) -> list[list[str]]:
    """The strongly connected groups of the words' reading graph, each after the groups it reads (Tarjan's
    algorithm, iterative: a chain of thousands of words is no recursion)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in reads:
        if root in order:
            continue
        work = [(root, iter(reads[root]))]
        order[root] = low[root] = len(order)
        stack.append(root)
        on_stack.add(root)
        while work:
            word, pending = work[-1]
            for nxt in pending:
                if nxt not in order:
                    order[nxt] = low[nxt] = len(order)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(reads[nxt])))
                    break
                if nxt in on_stack:
                    low[word] = min(low[word], order[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[word])
                if low[word] == order[word]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == word:
                            break
                    out.append(group)
    return out


def files_of(algorithms: Algorithms, path: str) -> frozenset[str] | None:
    """The algorithms a profile's ``[[algorithms]]`` gives a worker file to (None: none of them names it)."""
    named = frozenset(name for name, globs in algorithms.files if glob_match(path, globs))
    return named or None
