"""Which of the release's algorithms a launch names, by the name the engine's option takes.

The release says which algorithms it has and how it spells them (see ``resolve.algorithms``): SGLang's
``--speculative-algorithm NEXTN`` is its EAGLE, vLLM's ``"method": "deepseek_mtp"`` its ``mtp``. A run of the
named algorithm meets the uses that serve it (``CallSite.serves``). A name the release does not have is refused
by the engine before anything loads (argparse's ``choices``, the enum's lookup, the config's ``Literal``): the
selection says so and where, as the engine would.
"""

from __future__ import annotations

from dataclasses import dataclass

from spec_contract.engine.results import CallSite, Contract


@dataclass(frozen=True)
class Selection:
    """The algorithm a launch names: ``name`` as the launch spelled it (upper case), ``algorithm`` the release's
    (None: the release has no such algorithm, and ``refused`` says where the engine refuses the name)."""

    name: str
    algorithm: str | None
    refused: tuple[str, int] | None = None  # (path, 0-based line) of the engine's refusal of an unknown name
    valid: tuple[str, ...] = ()  # the names the release takes

    def selects(self, site: CallSite) -> bool:
        """Whether a run of the selection may reach the use."""
        return self.algorithm is not None and site.serves(self.algorithm)


def valid_names(contract: Contract, engine: str) -> list[str]:
    """The names the launch option takes, as the engine spells them (vLLM's ``method`` is lower case)."""
    release = contract.release
    if release is None:
        return []
    names = release.choices or tuple(s for s, n in release.spellings if n in release.names)
    return sorted(n.lower() for n in names) if engine == "vllm" else sorted(names)


def select(contract: Contract, engine: str, name: str) -> Selection:
    """The selection for ``name`` (any case); a name the release does not have is a refused selection."""
    wanted = name.strip().upper()
    release = contract.release
    valid = tuple(valid_names(contract, engine))
    if release is None:
        return Selection(wanted, wanted, valid=valid)
    known = release.name_of(wanted)
    if release.choices is not None and wanted not in (c.upper() for c in release.choices):
        known = None  # argparse refuses it before any lookup
    if known is None or known not in release.names:
        return Selection(wanted, None, release.where, valid)
    return Selection(wanted, known, valid=valid)
