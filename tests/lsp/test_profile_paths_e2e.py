"""A profile class the checked engine does not have is shown in the editor, as the command line exits 2 with
it: a fork found by vLLM's layout under its own package name whose interfaces renamed the EAGLE-3 Protocol
would otherwise have its capability check pass every class in silence."""

from __future__ import annotations

import textwrap
from pathlib import Path

from lsp_harness import initialize, open_document, until

FORK = {
    "forky/__init__.py": "",
    "forky/v1/__init__.py": "",
    "forky/v1/spec_decode/__init__.py": "",
    "forky/v1/spec_decode/eagle.py": """
        class EagleProposer:
            def greedy(self, hidden):
                return self.model.get_top_tokens(hidden)
    """,
    "forky/model_executor/__init__.py": "",
    "forky/model_executor/models/__init__.py": "",
    "forky/model_executor/models/registry.py": """
        _TEXT_GENERATION_MODELS = {"TinyForCausalLM": ("tiny", "TinyForCausalLM")}
    """,
    "forky/model_executor/models/interfaces.py": """
        class SupportsEagleThree:
            supports_eagle3 = True


        def supports_eagle3(model):
            return isinstance(model, SupportsEagleThree)
    """,
    "forky/model_executor/models/tiny.py": """
        class TinyForCausalLM:
            def get_top_tokens(self, hidden):
                return hidden
    """,
}


async def test_a_profile_class_the_fork_lacks_is_shown_in_the_editor(neovim, tmp_path: Path):
    root = tmp_path / "fork"
    for rel, text in FORK.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    await initialize(neovim, [root])
    open_document(neovim, root / "forky/model_executor/models/tiny.py")
    await until(lambda: neovim.messages, "a window/showMessage")
    texts = [m.message for m in neovim.messages]
    assert any("'forky.model_executor.models.interfaces.SupportsEagle3' names no class in this tree" in t
               for t in texts), texts
