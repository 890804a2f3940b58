"""A fork that picks each drafter by the draft model's class (tokenspeed 0.1.1's ``get_drafter_impl``): a
drafter's uses of its draft model are asked only of the classes the routing hands it, so a class no drafter
would take is never reported for that drafter's members.

The fork is a small SGLang-shaped tree of its own (package ``speedy``), checked with the README's recipe:
``Multi`` is returned for ``isinstance(model, DepthNextN)`` under MTP, ``Block`` is DFLASH's default from the
table and DFLASH refuses a draft that is no ``CaptureConfigurator``; ``Eagle`` takes any other draft.
"""

from __future__ import annotations

from engine_trees import analyze, make_tree
from test_engine_fork import _recipe

ROUTING = """
    def get_drafter_impl(spec_algo, model):
        from speedy.runtime.execution.drafter.block import Block
        from speedy.runtime.execution.drafter.eagle import Eagle
        from speedy.runtime.execution.drafter.multi import Multi
        from speedy.runtime.models.heads import DepthNextN

        DRAFTERS = {"EAGLE3": Eagle, "MTP": Eagle, "DFLASH": Block}
        if spec_algo == "MTP" and isinstance(model, DepthNextN):
            return Multi
        return DRAFTERS[spec_algo]
"""

FACTORY = """
    from speedy.runtime.models.heads import CaptureConfigurator


    def configure_draft_target(server_args, model_runner, draft_model_runner):
        draft_model = draft_model_runner.model
        if server_args.speculative_algorithm in ("DFLASH",):
            if not isinstance(draft_model, CaptureConfigurator):
                raise TypeError("the draft must configure the target's capture")
"""


def drafter(name: str, member: str) -> str:
    return f"""
    class {name}:
        def __init__(self, draft_model):
            self.draft_model = draft_model

        def run(self):
            return self.draft_model.{member}
    """


HEADS = """
    class CaptureConfigurator:
        pass


    class DepthModel:
        def __init__(self):
            self.num_depths = 2
            self.embed_tokens = None
            self.fc = None


    class DepthNextN:
        def __init__(self, config):
            self.model = DepthModel()


    class OtherNextN:
        def __init__(self, config):
            self.model = DepthModel()


    class BlockDFlash(CaptureConfigurator):
        def __init__(self, config):
            self.model = DepthModel()


    EntryClass = [DepthNextN, OtherNextN, BlockDFlash]
"""


def _tree(root, routing: str = ROUTING, factory: str = FACTORY):
    package = "speedy/runtime"
    files = {"speedy/__init__.py": "", f"{package}/__init__.py": "", f"{package}/execution/__init__.py": "",
             f"{package}/models/__init__.py": "", f"{package}/models/heads.py": HEADS,
             f"{package}/execution/factory.py": factory,
             f"{package}/execution/drafter/__init__.py": routing,
             f"{package}/execution/drafter/eagle.py": drafter("Eagle", "fc"),
             f"{package}/execution/drafter/multi.py": drafter("Multi", "num_depths"),
             f"{package}/execution/drafter/block.py": drafter("Block", "embed_tokens"),
             "pyproject.toml": _recipe().replace('engine-package = "tokenspeed"', 'engine-package = "speedy"')}
    return make_tree(root, files)


def _reported(analysis) -> list[tuple[str, str, str]]:
    return sorted((f.code, f.class_name, f.member) for f in analysis.findings)


def test_each_drafters_members_are_asked_only_of_the_classes_the_routing_hands_it(tmp_path):
    assert _reported(analyze(_tree(tmp_path))) == [
        ("SC001", "BlockDFlash", "embed_tokens"),  # DFLASH's default, past the CaptureConfigurator refusal
        ("SC001", "BlockDFlash", "fc"), ("SC001", "DepthNextN", "fc"),  # Eagle takes any other draft
        ("SC001", "DepthNextN", "num_depths"),  # the only class routed to Multi
        ("SC001", "OtherNextN", "fc"),
    ]


def test_without_the_routing_every_drafter_meets_every_draft(tmp_path):
    # the same drafters with no routing function and no refusal: each one's members are asked of every head
    analysis = analyze(_tree(tmp_path, routing="", factory=""))
    assert {("SC001", "OtherNextN", "num_depths"), ("SC001", "OtherNextN", "embed_tokens")} <= set(_reported(analysis))


def test_a_class_test_of_the_target_is_no_draft_gate(tmp_path):
    # the same refusal asked of the target model: DFLASH's default then meets any draft
    factory = FACTORY.replace("isinstance(draft_model, CaptureConfigurator)",
                              "isinstance(model_runner.model, CaptureConfigurator)")
    found = set(_reported(analyze(_tree(tmp_path, factory=factory))))
    assert {("SC001", "OtherNextN", "embed_tokens"), ("SC001", "DepthNextN", "embed_tokens")} <= found


ARCHITECTURE_ROUTING = """
    def get_drafter_impl(spec_algo, draft_model_config):
        from speedy.runtime.execution.drafter.block import Block
        from speedy.runtime.execution.drafter.eagle import Eagle
        from speedy.runtime.execution.drafter.multi import Multi

        if spec_algo == "DFLASH":
            if "DepthNextN" in draft_model_config.architectures:
                return Multi(draft_model_config)
            return Block(draft_model_config)
        return Eagle(draft_model_config)
"""


def test_a_drafter_picked_by_the_draft_config_s_architecture_meets_only_that_class(tmp_path):
    """vLLM's V2 model runner picks ``DFlash2Speculator`` when the draft config's architectures hold
    ``DFlash2DraftModel`` and ``DFlashSpeculator`` for the rest: ``Multi`` is asked only of the class the
    architecture loads, ``Block`` of every other draft, and ``Eagle``, which no test of a draft picks, of all."""
    assert _reported(analyze(_tree(tmp_path, routing=ARCHITECTURE_ROUTING, factory=""))) == [
        ("SC001", "BlockDFlash", "embed_tokens"), ("SC001", "BlockDFlash", "fc"),
        ("SC001", "DepthNextN", "fc"), ("SC001", "DepthNextN", "num_depths"),
        ("SC001", "OtherNextN", "embed_tokens"), ("SC001", "OtherNextN", "fc"),
    ]


def test_a_worker_no_routing_returns_that_runs_a_routed_drafter_s_method_meets_any_draft(tmp_path):
    """``DSparkSpeculator(DFlashSpeculator)`` is built by its algorithm's branch, not by the routing: the
    methods it inherits from a routed drafter meet every draft it may be handed."""
    routing = ARCHITECTURE_ROUTING.replace(
        "        if spec_algo == \"DFLASH\":",
        "        from speedy.runtime.execution.drafter.spark import Spark\n\n"
        "        if spec_algo == \"DSPARK\":\n            return Spark(draft_model_config)\n"
        "        if spec_algo == \"DFLASH\":")
    tree = _tree(tmp_path, routing=routing, factory="")
    (tree / "speedy/runtime/execution/drafter/spark.py").write_text(
        "from speedy.runtime.execution.drafter.multi import Multi\n\n\nclass Spark(Multi):\n"
        "    def extra(self):\n        return None\n")
    assert ("SC001", "OtherNextN", "num_depths") in _reported(analyze(tree))
