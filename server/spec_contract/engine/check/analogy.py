"""Implement by analogy: how a class can provide a member no inner model has, read from a class that has it.

The candidates are the model classes whose own body defines the member (``Qwen3ForCausalLM.get_embed_and_head``
returns ``self.model.embed_tokens.weight, self.lm_head.weight``). A candidate *fits* a class when every
attribute path its body uses exists there:

* ``self.a`` (read): the class provides ``a`` (assigned in its ``__init__`` or a base's, a method, …);
* ``self.a.b``: and when the class of ``self.a`` is known here (a delegate, ``self.model = Gemma3TextModel(…)``),
  that class provides ``b`` (the decoder's ``embed_tokens``); deeper segments (``.weight``, parameters that
  torch registers) are not asked;
* a written path (``self.capture_aux_hidden_states = True``, ``self.model.layers_to_capture = […]``) must name
  an attribute its owner already has (assigned in its ``__init__``): an attribute nobody else sets is one its
  ``forward`` never reads, and setting it would change nothing (unless the candidate's own part never sets it
  either, as Qwen2.5-VL's ``self.model.capture_aux_hidden_states``, and this class's part is that part's class
  or derives from it: a write inert in the model, which the body works without, here as there);
* every other name the body uses (``torch``, a module-level helper) is bound in the class's module.

When none fits as it is, the candidates are asked again adapted to the class's own names for the same parts
(:mod:`spec_contract.engine.check.adapting`: a decoder in ``self.language_model``, a head tied to the
embedding, the decoder's ``config.text_config``); an adapted body is fitted like any other.

Of the candidates that fit, the one whose parts match most closely wins (its delegates' attribute names and
classes, shared bases, then the same module); when none fits, the closest says which attribute is missing.
The fix is the candidate's definition itself (decorators and signature included), re-indented. A body that
reaches only into one language-model part, whose class in the model has the member itself
(``DeepseekV2ForCausalLM.get_input_embeddings`` returns ``self.model.embed_tokens``, and ``DeepseekV2Model``
has it), goes to this class's part instead, forwarded here, as upstream writes it.

The candidates come from the model files that register classes (their text names the profile's entry-class
variable), which a whole analysis summarises anyway; the candidates of a member are found once per process. A candidate body is parsed from its file's text, which
the index's recording does not see (an edit that adds a candidate elsewhere is picked up by the next whole
analysis).
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from spec_contract.engine.check import adapting
from spec_contract.engine.check import capture as capturing
from spec_contract.engine.check.capture_fit import Captures
from spec_contract.engine.check.lookup import MemberLookup
from spec_contract.engine.config import Config
from spec_contract.engine.resolve.index import ClassKey, Index
from spec_contract.engine.resolve.roles import HEADS
from spec_contract.engine.results import Capture, How, Provision
from spec_contract.engine.summarise.deferred import all_classes
from spec_contract.engine.text import lines_with_ends

_BUILTINS = frozenset(dir(builtins))
Chain = tuple[str, ...]
Annotations = tuple[tuple[int, int, int, str], ...]  # each parameter annotation: (line, from, to, its names)


@dataclass(frozen=True)
class Candidate:
    """A class whose own body defines the member: what that body uses, and its text."""

    key: ClassKey
    reads: tuple[Chain, ...]  # self.<chain> read (attribute paths after ``self``)
    writes: tuple[Chain, ...]
    names: frozenset[str]  # other free names the definition uses (modules, helpers, the return annotation)
    text: str  # the definition, decorators included, dedented (a renamed one's as its model wrote it: see adapted)
    path: str
    line: int  # 0-based line of the ``def``
    annotations: tuple[tuple[int, int, int, str], ...] = ()  # each parameter annotation: (line, from, to) and
    # the names it uses; dropped where the class's module does not bind them (they only document the call)
    renamed: tuple[tuple[str, str], ...] = ()  # adapted to a class (check.adapting): (its path, the model's name)

    @functools.cached_property
    def paths(self) -> tuple[tuple[Chain, Chain, bool], ...]:
        """The paths the body uses in the order a fit asks them, reads first: each as written, as asked of the
        class (see :func:`_collapsed`) and whether it is written; once per candidate, not per class fitted."""
        return tuple((chain, _collapsed(chain, self.renamed) if self.renamed else chain, written)
                     for written, chains in ((False, self.reads), (True, self.writes)) for chain in chains)

    @functools.cached_property
    def attributes(self) -> frozenset[str]:
        """The attributes of ``self`` the body reads or writes (the first segment of each path)."""
        return frozenset(chain[0] for chain in self.reads + self.writes)

    @functools.cached_property
    def capture_writes(self) -> tuple[str, frozenset[Chain]] | None:
        """For a capture's body (it sets ``capture_aux_hidden_states`` and a decoder's ``layers_to_capture``, see
        :func:`_with_capture`): that decoder's attribute, and those two writes; None for any other body."""
        delegate = next((w[0] for w in self.writes if len(w) == 2 and w[1] == "layers_to_capture"), None)
        if delegate is None or ("capture_aux_hidden_states",) not in self.writes:
            return None
        return delegate, frozenset({("capture_aux_hidden_states",), (delegate, "layers_to_capture")})

    @functools.cached_property
    def body(self) -> tuple[object, ...]:
        """What the fit depends on besides the class (see :class:`Asked`): the text, the renames, and the class
        a body that writes is the model of (see :func:`_inert`)."""
        return self.text, self.renamed, self.key if self.writes else None


@dataclass
class Asked:
    """What fitting candidates to one class asked (see ``Analogies.missing``), kept for all its members: which
    attributes the class has (the candidates name the same few parts), and why each body does not fit (None: it
    fits), as the fit depends only on the body (:attr:`Candidate.body`), and many candidates are one body copied
    from model to model (SGLang 0.5.23: 62 ``get_embed_and_head`` of 15 texts)."""

    has: dict[str, bool] = field(default_factory=dict)
    why: dict[tuple[object, ...], str | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Analogy:
    """The outcome for one class and member: the candidate that fits (``like``), or the closest and why not."""

    like: Candidate | None
    closest: Candidate | None
    why: str  # when nothing fits: which attribute the closest candidate uses that the class lacks
    parts: int = 0  # when nothing fits: how many of the closest candidate's parts the class holds too
    capture: Capture | None = None  # the decoder capture the candidate's body needs as well (check.capture)


def _body_facts(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[set[Chain], set[Chain], frozenset[str]]:
    """What a definition's body uses, in one walk of it: the maximal ``self.a.b`` chains it reads and writes
    (``del`` counts as a write), and the names it loads that it does not bind itself (parameters, locals,
    comprehension targets, nested definitions, imports), less those only its parameter annotations use
    (:func:`adapted` drops those where the target module lacks them).

    One walk with a plain stack instead of one ``ast.walk`` per kind of node: a cold run reads the candidate
    bodies of every contract member before its check forks, on one core (SGLang 0.5.23: 343 bodies)."""
    reads: set[Chain] = set()
    writes: set[Chain] = set()
    loaded: set[str] = set()
    bound = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    inner: set[int] = set()  # the values of attributes: parts of a longer chain, never maximal
    skip = {id(a) for a in _parameter_annotations_nodes(fn)}  # names only these use need not be bound
    stack: list[ast.AST] = [fn]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
            continue
        if isinstance(node, ast.Attribute):
            value = node.value
            if isinstance(value, ast.Attribute):
                inner.add(id(value))
            if id(node) not in inner:
                parts = [node.attr]
                while isinstance(value, ast.Attribute):
                    parts.append(value.attr)
                    value = value.value
                if isinstance(value, ast.Name) and value.id == "self":
                    (writes if isinstance(node.ctx, (ast.Store, ast.Del)) else reads).add(tuple(reversed(parts)))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        for slot in node._fields:
            child = getattr(node, slot, None)
            if isinstance(child, ast.AST) and id(child) not in skip:
                stack.append(child)
            elif isinstance(child, list):
                stack.extend(c for c in child if isinstance(c, ast.AST) and id(c) not in skip)
    return reads, writes, frozenset(loaded - bound - _BUILTINS - {"self"})


@functools.lru_cache(maxsize=2048)
def _facts(definition: str) -> tuple[str, set[Chain], set[Chain], frozenset[str], Annotations] | None:
    """The name of the function a definition's text defines, what its body uses (:func:`_body_facts`: the sets
    are read, never changed) and its parameter annotations; None when it is not one function that parses.
    Memoised by the text: many candidates are one body copied from model to model (vLLM 0.33.0: 167
    ``embed_input_ids`` of 28 texts)."""
    try:
        fn = ast.parse(definition).body[0]
    except (SyntaxError, ValueError, IndexError):
        return None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    return (fn.name, *_body_facts(fn), _parameter_annotations(fn))


def _parameter_annotations(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[tuple[int, int, int, str], ...]:
    """(0-based line, start, end column, names) of each parameter annotation written on its parameter's line:
    the text ``: Optional[List[int]]`` between the name and the annotation's end."""
    out = []
    for arg in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs, fn.args.vararg, fn.args.kwarg):
        note = arg.annotation if arg is not None else None
        if arg is None or note is None or note.end_lineno != arg.lineno or note.end_col_offset is None:
            continue
        names = " ".join(sorted({n.id for n in ast.walk(note) if isinstance(n, ast.Name)}))
        out.append((arg.lineno - 1, arg.col_offset + len(arg.arg), note.end_col_offset, names))
    return tuple(out)


def adapted(candidate: Candidate, bound: frozenset[str]) -> str:
    """The candidate's definition with its renames written (:func:`adapting.adapt`: only now, for the candidate
    chosen, not for every one fitted) and less the parameter annotations that use names the target module does
    not bind (``layer_ids: Optional[List[int]] = None`` → ``layer_ids=None`` in a module without ``List``)."""
    body = adapting.adapt(candidate.text, {old: new for new, old in candidate.renamed}) if candidate.renamed \
        else candidate.text
    lines = lines_with_ends(body)  # numbered as the parser numbers the annotations' lines
    for line, start, end, names in sorted(candidate.annotations, reverse=True):
        if set(names.split()) - bound - _BUILTINS:
            text = lines[line]
            rest = text[end:]
            if rest.startswith(" = "):
                rest = "=" + rest[3:]
            lines[line] = text[:start] + rest
    return "".join(lines)


def _parameter_annotations_nodes(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    """The parameter annotations :func:`adapted` can drop (written on their parameter's line)."""
    return [arg.annotation for arg in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs, fn.args.vararg,
                                       fn.args.kwarg)
            if arg is not None and arg.annotation is not None and arg.annotation.end_lineno == arg.lineno]


# Statements at the start of a line. Each pattern starts with the newline before the line (the text is read
# with one put in front) rather than with a multi-line ``^``: a pattern that starts with a literal is searched
# for that character, one with ``^`` is tried at every character of the text (2-3x slower on model files).
_TOP_BINDING = re.compile(r"\n(?:(?:async\s+)?def\s+(\w+)|class\s+(\w+)|(\w+)\s*[:=])")
_IMPORTED = re.compile(r"\n(?:from\s+\S+\s+)?import\s+([^\n(]*(?:\([^)]*\))?)")
_DEF = re.compile(r"def\s+(\w+)\s*\(")


def _space_before(text: str, at: int) -> int:
    """Where the whitespace just before ``text[at]`` starts (``at`` when there is none)."""
    while at > 0 and text[at - 1].isspace():
        at -= 1
    return at


def _indented(text: str, at: int) -> bool:
    r"""Whether ``text[at]`` follows whitespace that runs back to the start of a line (``^\s+`` there): the text
    before it on its line is all whitespace, or it starts a line and the line before is blank (so the run holds
    that line's break). Read a line at a time by ``str`` methods, not a character at a time: every ``def`` of
    every model file is asked."""
    line = text.rfind("\n", 0, at) + 1
    if line < at:
        return text[line:at].isspace()
    if at == 0:
        return False
    before = text[text.rfind("\n", 0, at - 1) + 1:at - 1]
    return not before or before.isspace()


def defined_methods(text: str) -> set[str]:
    r"""The names of the indented ``def``s (and ``async def``s) of a text, as ``^\s+(?:async\s+)?def\s+(\w+)\s*\(``
    finds them in multi-line mode: searched for the literal ``def``, then checked for what stands before it
    (seven times faster than that pattern, which is tried at every character)."""
    found = set()
    for match in _DEF.finditer(text):
        at = match.start()
        if _indented(text, at):
            found.add(match.group(1))
            continue
        before = _space_before(text, at)
        if before < at and text.endswith("async", 0, before) and _indented(text, before - 5):
            found.add(match.group(1))
    return found


def top_level_names(text: str) -> frozenset[str]:
    """The names a module binds at its top level, read from its text: imports (``as`` names included), defs,
    classes and assignments (a superset is harmless: it only lets a body through that uses them)."""
    text = "\n" + text
    names = {n for groups in _TOP_BINDING.findall(text) for n in groups if n}
    for imported in _IMPORTED.findall(text):
        for part in imported.strip("() \t").replace("\n", " ").split(","):
            words = part.split()
            if words:
                names.add(words[-1].split(".")[0] if len(words) < 3 else words[-1])
    return frozenset(names)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _definition(lines: list[str], line: int) -> str:
    """The method whose ``def`` is on ``line``, with its decorators, dedented: the lines up to the next one
    indented no deeper than the ``def`` (blank lines and comments do not end it)."""
    indent = _indent(lines[line])
    first = line
    while first > 0 and lines[first - 1].strip().startswith("@") and _indent(lines[first - 1]) == indent:
        first -= 1
    end = line + 1
    while end < len(lines):
        stripped = lines[end].strip()
        if stripped and not stripped.startswith("#") and _indent(lines[end]) <= indent:
            break
        end += 1
    while end > line + 1 and not lines[end - 1].strip():
        end -= 1
    return textwrap.dedent("".join(lines[first:end]))


class Analogies:
    """Implement by analogy for one analysis (see the module docstring): ``models`` are the model files
    (path, module), ``text`` reads a file as the analysis does, ``registers`` is the profile's entry-class
    variable (None: every model file may hold candidates)."""

    def __init__(self, index: Index, models: Sequence[tuple[str, str]], text: Callable[[str], str | None],
                 registers: str | None = None) -> None:
        self._index = index
        self._models = models
        self._text = text
        self._registers = registers  # the profile's entry-class variable: only files naming it hold models
        self._candidates: dict[str, list[Candidate]] = {}
        # member → the classes whose body hands it to a part (``self.model.set_eagle3_layers_to_capture(…)``)
        # and that part's attribute: the parts they hand it to are the models of a decoder's implementation
        self._forwarders: dict[str, list[tuple[ClassKey, str]]] = {}
        self._defining: dict[str, list[tuple[str, str, str]]] | None = None  # method name → (path, module, text)
        self._bound: dict[str, frozenset[str]] = {}  # module → its top-level names
        self._lines: dict[str, list[str]] = {}  # path → its text's lines, for the candidates' definitions
        self._provisions: dict[tuple[ClassKey, str], Provision | None] = {}
        self._analogies: dict[tuple[ClassKey, str], Analogy | None] = {}
        self._scores: dict[tuple[ClassKey, ClassKey], tuple[int, frozenset[str]]] = {}  # see ``parts``
        self._kin: dict[tuple[ClassKey, str | None], tuple[frozenset[ClassKey], frozenset[str]]] = {}  # see _kin
        self._kinship: dict[ClassKey, tuple[Kinship, frozenset[str]]] = {}  # see _kinship
        self._adapted: dict[tuple[int, tuple[tuple[str, str], ...]], Candidate] = {}  # see ``_adapted``
        self._renames: dict[ClassKey, adapting.Renames] = {}  # see ``_adapted``: asked for each member
        self._asked: dict[ClassKey, Asked] = {}  # see ``missing``
        self.captures = Captures(index, text)  # the EAGLE-3 decoder captures (see _with_capture)

    def candidates(self, member: str) -> list[Candidate]:
        """The classes whose own body defines ``member``, the bodies that ask most of a class first, then by name
        (see :func:`_likeliest`)."""
        found = self._candidates.get(member)
        if found is None:
            found = self._candidates[member] = self._find(member)
        return found

    def _find(self, member: str) -> list[Candidate]:
        if self._defining is None:  # one pass over the model files' text for every member asked for later
            self._defining = {}
            for path, module in self._models:
                text = self._text(path)
                if text is None or (self._registers is not None and self._registers not in text):
                    continue
                for name in defined_methods(text):
                    self._defining.setdefault(name, []).append((path, module, text))
        out = []
        for path, module, text in self._defining.get(member, ()):
            summary = self._index.summary(module)
            if summary is None:
                continue
            for cls in all_classes(summary, mentioning=f"def {member}"):
                # methods only: an attribute (``lm_head``, ``model``) is a part the class holds, not a body
                own = next((m for m in cls.members if m.name == member and m.kind in ("method", "async_method")),
                           None)
                if own is not None and "." not in cls.qualname:
                    candidate = self._candidate(ClassKey(module, cls.qualname), member, path, text, own.span.line)
                    if candidate is not None:
                        out.append(candidate)
        return sorted(out, key=_asking)

    def _candidate(self, key: ClassKey, member: str, path: str, text: str, line: int) -> Candidate | None:
        """The candidate whose ``def`` is at ``line`` of ``text``: only the definition is parsed (its extent
        read from the indentation), not the file."""
        lines = self._lines.get(path) or self._lines.setdefault(path, lines_with_ends(text))  # the parser's lines
        definition = _definition(lines, line)
        facts = _facts(definition)
        if facts is None or facts[0] != member:
            return None
        _, reads, writes, names, annotations = facts
        handed = [chain for chain in reads if len(chain) >= 2 and chain[-1] == member]
        if handed:  # it hands the member on to an attribute: a forward, no model of an implementation
            if len(handed[0]) == 2:
                self._forwarders.setdefault(member, []).append((key, handed[0][0]))
            return None
        return Candidate(key, tuple(sorted(reads)), tuple(sorted(writes)), names, definition, path, line,
                         annotations)

    def provision(self, lookup: MemberLookup, member: str, config: Config) -> Provision | None:
        """See :meth:`_provision_of` (memoised: the check asks for each crash and each refused algorithm)."""
        memo = (lookup.key, member)
        if memo not in self._provisions:
            self._provisions[memo] = self._provision_of(lookup, member, config)
        return self._provisions[memo]

    def _provision_of(self, lookup: MemberLookup, member: str, config: Config) -> Provision | None:
        """How the class can provide a member no inner model has: implement it like a candidate that fits
        the class (in its part, forwarded here, where the candidate's own part has it: see
        :func:`_owning_part`); else, when one of its language-model attributes holds a class such a candidate fits,
        implement it there and forward it here (both); else cannot tell, saying why. None: no class in the
        tree implements the member."""
        key = lookup.key
        own = self.implement(lookup, member)
        if own is None:
            return None
        if own.like is not None:
            owner = _owning_part(self, key, own.like, member, config)
            if owner is not None:
                return self._provision(How.BOTH, owner[1], owner[2], owner[0], owner[3])
            return self._provision(How.IMPLEMENT, key, own.like, capture=own.capture)
        for attr, inners in sorted(self._index.delegates(key).items(),
                                   key=lambda item: (item[0] not in config.delegate_names, item[0])):
            if attr not in config.delegate_names:
                continue
            for inner in inners:
                if inner == key or self._index.provision(inner, member) is not None:
                    continue
                found = self.implement(MemberLookup(self._index, inner, config), member)  # memoised by class
                if found is not None and found.like is not None:
                    return self._provision(How.BOTH, inner, found.like, attr, found.capture)
        closest = own.closest
        assert closest is not None  # an Analogy without a fit has its closest candidate
        why = f"`{_short(closest.key)}.{member}` is the closest model, but {own.why}"
        like = closest.key.dotted if own.parts else None
        part = _unfit_part(self, key, member, config)
        if part is None:
            return Provision(How.UNKNOWN, like=like, why=why)
        attr, inner, model, holder, missing = part
        return Provision(How.UNKNOWN, like=like, delegate=attr, path=self._index.path_of(inner.module),
                         in_class=inner.qualname,
                         why=f"{why}; and `{_short(inner)}` (`self.{attr}`) lacks it too, so a fix edits it as well: "
                             f"`{_short(model.key)}.{member}`, which `{_short(holder)}` hands it to, is the closest "
                             f"model there, but {missing}")

    def _bound_names(self, key: ClassKey) -> frozenset[str]:
        """The names the module of ``key`` binds at its top level (memoised per module)."""
        bound = self._bound.get(key.module)
        if bound is None:
            path = self._index.path_of(key.module)
            text = self._text(path) if path is not None else None
            bound = self._bound[key.module] = top_level_names(text) if text is not None else frozenset()
        return bound

    def _provision(self, how: How, key: ClassKey, like: Candidate, delegate: str | None = None,
                   capture: Capture | None = None) -> Provision:
        return Provision(how, delegate=delegate, inner_class=key.qualname if how is How.BOTH else None,
                         like=like.key.dotted, body=adapted(like, self._bound_names(key)),
                         path=self._index.path_of(key.module),
                         in_class=key.qualname, like_path=like.path, like_line=like.line, capture=capture)

    # fitting ---------------------------------------------------------------------------------------
    def implement(self, lookup: MemberLookup, member: str) -> Analogy | None:
        """See :meth:`_implement` (memoised)."""
        memo = (lookup.key, member)
        if memo not in self._analogies:
            self._analogies[memo] = self._implement(lookup, member)
        return self._analogies[memo]

    def _implement(self, lookup: MemberLookup, member: str) -> Analogy | None:
        """The candidate that fits the class best, or the closest one and why it does not; None when no class
        implements the member at all."""
        key = lookup.key
        candidates = [c for c in self.candidates(member) if c.key != key]
        if not candidates:
            return None
        # the fit is asked of this class's own parts (loaded already); only the candidates that fit are
        # scored by their parts, which reads their classes too. The models adapted to this class's names
        # are asked only when none fits as it is
        fits: list[Candidate] = []
        misfits: list[tuple[Candidate, str]] = []  # with why each does not fit
        for batch in (candidates, None):
            # the likeliest first: once a few fit, no later one can be among the few scored (SGLang 0.5.23: a
            # quarter of the fits asked)
            for candidate in _likeliest(key, batch if batch is not None
                                        else sorted(_adapted(self, key, candidates), key=_asking)):
                missing = self.missing(key, candidate)
                if missing is None:
                    if key not in self._index.mro(candidate.key):  # a subclass's body is no model
                        fits.append(candidate)
                        if len(fits) == _SCORED:
                            break
                else:
                    misfits.append((candidate, missing))
            if fits:
                break
        if fits:
            # of the likeliest few (same module, the body that asks most of the class), the closest parts win
            best = min(fits, key=lambda c: (-self.parts(key, c), c.key.module != key.module, c.key.dotted))
            return Analogy(best, None, "")
        if not misfits:
            return None
        with_capture = _with_capture(self, self._index, key, misfits)
        if with_capture is not None:
            return with_capture
        # the closest misfit: of the likeliest few (same module, most paths; a model adapted to this class's names
        # first, as what it lacks is what this class lacks), the one whose parts match best
        misfits.sort(key=lambda item: (item[0].key.module != key.module, -len(item[0].reads) - len(item[0].writes),
                                       item[0].key.dotted, not item[0].renamed))
        closest = max(misfits[:6], key=lambda item: self.parts(key, item[0]))
        return Analogy(None, closest[0], closest[1], self.parts(key, closest[0]))

    def missing(self, key: ClassKey, candidate: Candidate, skip: frozenset[Chain] = frozenset()) -> str | None:
        """Why the candidate's body does not fit the class (None: it fits); the writes in ``skip`` are not
        asked (another part of the change provides them). Memoised per class and body (see :class:`Asked`)."""
        asked = self._asked.get(key)
        if asked is None:
            asked = self._asked[key] = Asked()
        memo = (candidate.body, skip)
        if memo not in asked.why:
            asked.why[memo] = self._missing(key, candidate, skip, asked.has)
        return asked.why[memo]

    def _missing(self, key: ClassKey, candidate: Candidate, skip: frozenset[Chain], has: dict[str, bool]) -> str | None:
        index = self._index
        name = key.qualname
        for written_as, chain, written in candidate.paths:
            if written and written_as in skip:
                continue
            provided = has.get(chain[0])
            if provided is None:
                provided = has[chain[0]] = index.provision(key, chain[0]) is not None
            if not provided:
                if written and len(chain) == 1:
                    return (f"the body sets `self.{chain[0]}`, which `{name}` never sets itself, so its forward "
                            "does not read it")
                return f"the body reads `self.{chain[0]}`, and `{name}` has no `{chain[0]}`"
            if len(chain) < 2 or (len(chain) == 2 and not written):
                continue  # the last segment read may be a parameter torch registers (``self.lm_head.weight``)
            owners = index.delegates(key).get(chain[0], ())
            if not owners:
                return f"the body uses `self.{'.'.join(chain[:2])}`, and the class of `self.{chain[0]}` is not known here"
            if not any(index.provision(owner, chain[1]) is not None for owner in owners):
                owner = _short(owners[0])
                if written and _inert(index, key, candidate, chain):
                    continue  # the model's own part never sets it either: the body works without it there too
                if written:
                    return (f"the body sets `self.{chain[0]}.{chain[1]}`, which `{owner}` never sets itself, so its "
                            f"forward does not read it")
                return f"the body reads `self.{chain[0]}.{chain[1]}`, and `{owner}` has no `{chain[1]}`"
        # the module's names are read only now, for a body whose paths all fit (most classes fit none)
        unbound = candidate.names - self._bound_names(key) if candidate.names else frozenset()
        return f"the body uses `{min(unbound)}`, which the module of `{name}` does not bind" if unbound else None

    def parts(self, key: ClassKey, candidate: Candidate) -> int:
        """How closely the candidate's parts match the class's: delegates of the same name and class (or
        sharing a base), and bases in common. Memoised with the modules it read (a class and a candidate are
        scored again and again: for the best fit, the closest misfit, and each part a fix may edit)."""
        return self._index.memoised(self._scores, (key, candidate.key), _score, self, key, candidate.key)


_SCORED = 8  # how many of the likeliest fits are scored by their parts


def _asking(candidate: Candidate) -> tuple[int, str]:
    """The bodies that ask most of a class first, then by name (one candidate per class and body: a total order)."""
    return -len(candidate.reads) - len(candidate.writes), candidate.key.dotted


def _likeliest(key: ClassKey, candidates: list[Candidate]) -> list[Candidate]:
    """``candidates`` (in :func:`_asking`'s order) in the order they are likeliest to model the class ``key``
    well: those of its module first. A partition, not a sort per class (SGLang 0.5.23: 760 lists of 30)."""
    return [c for c in candidates if c.key.module == key.module] + \
        [c for c in candidates if c.key.module != key.module]


def _collapsed(chain: Chain, renamed: tuple[tuple[str, str], ...]) -> Chain:
    """A chain through a path an adapted body was given for one of the model's names (``self.config.text_config``
    for ``self.config``, read from this class's ``__init__`` or ``forward``, so known to exist) asked as the
    model's chain was: ``config.text_config.num_hidden_layers`` as ``config.num_hidden_layers``."""
    for new, _ in renamed:
        path = tuple(new.split("."))
        if len(path) > 1 and chain[:len(path)] == path:
            return (path[0], *chain[len(path):])
    return chain


def _inert(index: Index, key: ClassKey, candidate: Candidate, chain: Chain) -> bool:
    """Whether the candidate's write of ``self.a.b`` is inert here as in its own class: its ``self.a`` class
    never sets ``b`` (Qwen2.5-VL sets ``self.model.capture_aux_hidden_states``, which its ``Qwen2Model`` never
    reads), so the body does its work without that write there; and this class's ``self.a`` is that class or
    derives from it (Qwen3-VL's ``Qwen3LLMModel`` from ``Qwen2Model``), and does not set ``b`` either."""
    theirs = index.delegates(candidate.key).get(chain[0], ())
    ours = index.delegates(key).get(chain[0], ())
    return bool(theirs and ours) and all(index.provision(owner, chain[1]) is None for owner in theirs) and \
        all(any(t in index.mro(o) for t in theirs) for o in ours)


def _unfit_part(analogies: Analogies, key: ClassKey, member: str,
                config: Config) -> tuple[str, ClassKey, Candidate, ClassKey, str] | None:
    """When neither the class nor its parts can take a candidate's body: the part (a decoder in one of the
    profile's language-model attributes) that lacks the member while the parts other classes hand it to
    have it (``Qwen2MoeForCausalLM`` hands ``set_eagle3_layers_to_capture`` to its ``Qwen2MoeModel``), so
    the fix edits that part too: (attribute, part, the closest such model, the class handing it over, what
    the part lacks for it). None: no such part."""
    index = analogies._index

    def bare(part: ClassKey) -> bool:  # a decoder: no head of its own (a language model has one)
        return all(index.provision(part, head) is None for head in HEADS)

    candidates = analogies.candidates(member)  # finding them finds the forwarders too
    models = {inner: holder for holder, attr in analogies._forwarders.get(member, ())
              for inner in index.delegates(holder).get(attr, ()) if bare(inner)}
    decoders = [c for c in candidates if c.key in models]
    if not decoders:
        return None
    for attr, inners in sorted(index.delegates(key).items()):
        if attr not in config.delegate_names:
            continue
        for inner in inners:
            if inner == key or index.provision(inner, member) is not None or not bare(inner):
                continue
            scored = [(-analogies.parts(inner, c), c.key.module != inner.module, c.key.dotted, c) for c in decoders
                      if c.key != inner]
            if not scored:
                continue
            model = min(scored, key=lambda item: item[:3])[3]
            missing = analogies.missing(inner, model)
            # what the decoder's own attributes lack (its forward captures nothing), not a name to import
            if missing is not None and f"the module of `{_short(inner)}`" not in missing:
                return attr, inner, model, models[model.key], missing
    return None


def _owning_part(analogies: Analogies, key: ClassKey, like: Candidate, member: str,
                 config: Config) -> tuple[str, ClassKey, Candidate, Capture | None] | None:
    """When the model's body reaches only into one of its language-model parts (``return
    self.model.embed_tokens``) and that part's class has the member itself (DeepseekV2's ``DeepseekV2Model``
    has ``get_input_embeddings``): the member belongs to the part, so this class's part that lacks it gets it
    (implemented like a candidate that fits the part) and the class forwards it there, as a chain. (attribute,
    part, its model, its capture); None: the member stays the class's own."""
    index = analogies._index
    if len(like.attributes) != 1 or any(len(chain) < 2 for chain in like.reads + like.writes):
        return None
    (attr,) = like.attributes
    if attr not in config.delegate_names or not any(
            index.provision(part, member) is not None for part in index.delegates(like.key).get(attr, ())):
        return None
    for inner in index.delegates(key).get(attr, ()):
        if inner != key and index.provision(inner, member) is None:
            found = analogies.implement(MemberLookup(index, inner, config), member)
            if found is not None and found.like is not None:
                return attr, inner, found.like, found.capture
    return None


def _score(analogies: Analogies, key: ClassKey, other: ClassKey) -> int:
    """See ``Analogies.parts``: how closely the parts of ``other`` match those of ``key``."""
    index = analogies._index
    mine, bases = index.memoised(analogies._kinship, key, _kinship, index, key)
    score = 0
    for attr in index.delegates(other):
        ours = mine.get(attr)
        if ours is None:
            continue
        score += 1
        # a part of the same class or kin: the MROs meet (each side's MROs gathered once, as a set, for every
        # class scored against it, rather than walked per pair: SGLang 0.5.23 scores 3,500 pairs)
        theirs = index.memoised(analogies._kin, (other, attr), _kin, index, other, attr)
        if not ours.isdisjoint(theirs):
            score += 2
    theirs_bases = index.memoised(analogies._kin, (other, None), _kin, index, other, None)
    return score + len(bases & theirs_bases)


Kinship = tuple[dict[str, frozenset[ClassKey]], frozenset[ClassKey]]  # see _kinship


def _kinship(index: Index, key: ClassKey) -> Kinship:
    """What :func:`_score` compares of the class scored against the candidates, read once for all of them: the
    kin of each of its parts (see :func:`_kin`), and its bases (the check of a class reads its parts' MROs anyway,
    asking its inner models for the members it lacks)."""
    return {attr: _kin(index, key, attr) for attr in index.delegates(key)}, _kin(index, key, None)


def _kin(index: Index, key: ClassKey, attr: str | None) -> frozenset[ClassKey]:
    """The classes in the MROs of the class's ``self.<attr>`` classes, or (``attr`` None) its bases: what
    :func:`_score` compares, once per class (a class is scored against every candidate's class)."""
    if attr is None:
        return frozenset(index.mro(key)[1:])
    return frozenset(k for o in index.delegates(key).get(attr, ()) for k in index.mro(o))


def _short(key: ClassKey) -> str:
    return key.qualname.rsplit(".", 1)[-1]


def _adapted(analogies: Analogies, key: ClassKey, candidates: list[Candidate]) -> list[Candidate]:
    """The candidates adapted to a class that lacks ``model`` or ``lm_head`` but holds those parts under other
    names (:mod:`spec_contract.engine.check.adapting`), as candidates of their own (fitted like the rest)."""
    index = analogies._index
    has = {name for name in ("model", "lm_head") if index.provision(key, name) is not None}
    if len(has) == 2 or index.provision(key, "logits_processor") is None:
        return []  # it has both; or no head of its own to run (a decoder, an encoder): nothing to adapt to
    if key not in analogies._renames:
        analogies._renames[key] = adapting.renames(analogies.captures.parsed(key), has)
    names = dict(analogies._renames[key])
    config = names.pop("config", None)
    out = []
    for candidate in candidates:
        used = candidate.attributes
        mapped = {old: new for old, new in names.items() if old in used}
        if not mapped or "lm_head" in mapped and any(w[0] == "lm_head" for w in candidate.writes):
            continue  # nothing to adapt; or it writes the head, which is the embedding here
        if config is not None and "model" in mapped and "config" in used:
            if not _own_config(analogies, candidate):
                continue  # its decoder's configuration is not its own: the paths would not correspond
            mapped["config"] = config
        renamed = tuple(sorted((new, old) for old, new in mapped.items()))
        memo = (id(candidate), renamed)  # classes with the same names share the adapted body
        if memo not in analogies._adapted:
            analogies._adapted[memo] = _renamed(candidate, renamed)
        out.append(analogies._adapted[memo])
    return out


def _own_config(analogies: Analogies, candidate: Candidate) -> bool:
    """Whether the candidate's class builds its ``self.model`` from its ``self.config`` (two assignments read
    alone from its file, not its methods parsed)."""
    index = analogies._index
    found = [index.provision(candidate.key, name) for name in ("model", "config")]
    text = analogies._text(candidate.path)
    if text is None or any(p is None or p.member is None or p.owner != candidate.key for p in found):
        return False
    return adapting.built_from_own_config(*(adapting.statement(text, p.member.span.line) for p in found
                                            if p is not None and p.member is not None))


def _renamed(candidate: Candidate, renamed: tuple[tuple[str, str], ...]) -> Candidate:
    """The candidate with ``self.<old>`` written as ``self.<new>`` for each (new, old) of ``renamed``: its paths
    moved (not parsed again: the names it binds and its signature stay), its text rewritten when it is chosen
    (:func:`adapted`)."""
    names = {old: new for new, old in renamed}

    def moved(chains: tuple[Chain, ...]) -> tuple[Chain, ...]:
        return tuple(sorted({(*names[c[0]].split("."), *c[1:]) if c[0] in names else c for c in chains}))

    return Candidate(candidate.key, moved(candidate.reads), moved(candidate.writes), candidate.names,
                     candidate.text, candidate.path, candidate.line, candidate.annotations,
                     renamed)


def _with_capture(analogies: Analogies, index: Index, key: ClassKey,
                  misfits: list[tuple[Candidate, str]]) -> Analogy | None:
    """When the candidates miss only because the class and its decoder do not capture aux hidden states
    yet (``capture_aux_hidden_states``, ``model.layers_to_capture``): the closest such candidate with the
    decoder capture that makes its body work (:mod:`spec_contract.engine.check.capture`), or, when that
    change does not apply to the class's shape, the candidate and why not. None: no candidate misses
    only that. ``misfits`` are the candidates with why each does not fit as it is."""
    fits: list[tuple[Candidate, str, str]] = []
    parts = index.delegates(key)
    for candidate, plain in misfits:
        writes = candidate.capture_writes
        if writes is None or len(parts.get(writes[0], ())) != 1:
            continue  # not the capture's body, or this class holds no one decoder where it writes
        delegate, skip = writes
        if analogies.missing(key, candidate, skip) is None and \
                key not in index.mro(candidate.key):
            fits.append((candidate, delegate, plain))
    if not fits:
        return None
    fits.sort(key=lambda f: (f[0].key.module != key.module, *_asking(f[0])))
    best, delegate, plain = min(fits[:_SCORED], key=lambda f: (-analogies.parts(key, f[0]),
                                                               f[0].key.module != key.module, f[0].key.dotted))
    try:
        capture = analogies.captures.capture(key, delegate, [(f[0].key, dict(f[0].renamed).get(delegate, delegate))
                                                             for f in fits if f[1] == delegate])
    except capturing.Declined as why:
        return Analogy(None, best, f"{plain}, and making it capture them does not apply here: {why}",
                       analogies.parts(key, best))
    return Analogy(best, None, "", capture=capture)
