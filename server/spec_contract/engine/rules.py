"""The rule registry: every finding kind the engine reports, in one place.

A code is never renumbered or reused; new kinds are appended. The CLI's reports, ``--select``, the
settings' ``severity`` table, the language server (diagnostic codes, their documentation links, hover) and
the README's table all read this registry, so a kind is added here and nowhere else.

What each severity promises: an **error** means a run with the class reaches a worker line that raises
``AttributeError``; a **warning** is a capability the class loses (the engine refuses it cleanly at start-up)
or a crash that needs an unusual configuration; **information** is a degraded path or a rare condition.
"""

from __future__ import annotations

from dataclasses import dataclass

@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str  # the default; users override it per code with ``severity = {CODE = "..."}``
    summary: str  # one line, for the README table and ``--help``

    @property
    def anchor(self) -> str:
        """The README heading that documents the rule (``README.md#sc003-missing-capability``)."""
        return f"{self.code.lower()}-{self.name}"


RULES: tuple[Rule, ...] = (
    Rule("SC001", "missing-forward", "error",
         "a run with this class reaches a worker line that uses a member the wrapper does not forward"),
    Rule("SC002", "missing-optional-forward", "information",
         "a guarded (optional) contract member is not forwarded: the run takes a degraded path"),
    Rule("SC003", "missing-capability", "warning",
         "the class fails a capability gate its inner model passes: the engine refuses the algorithm at "
         "start-up (lists every member the algorithm needs past the gate)"),
    Rule("SC004", "missing-conditional-forward", "information",
         "a member used only under a rare condition (an environment flag that defaults off, a model-type "
         "or config test) is not forwarded"),
    Rule("SC005", "missing-draft-forward", "warning",
         "a draft-model member is not forwarded by a class that is not shaped like a draft: it crashes only "
         "if a draft checkpoint names this class"),
)

BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}
DEFAULT_SEVERITY: dict[str, str] = {rule.code: rule.severity for rule in RULES}
CODES: tuple[str, ...] = tuple(BY_CODE)


def known_codes() -> str:
    """The codes for a message: "SC001, SC002, …"."""
    return ", ".join(CODES)
