"""Worker classes picked from a table or registered by a decorator, under an algorithm's name, instead of built
under an ``if``: each runs for that algorithm's runs only (``summarise.registries``, ``runs.function_runs``).
One shape per test, on trees written here."""

from __future__ import annotations

import pytest
from engine_trees import SPEC_INFO, SPEC_INFO_PATH, analyze, make_tree

PACKAGES = {"pkg/__init__.py": "", "pkg/models/__init__.py": "", "pkg/speculative/__init__.py": ""}
LLAMA = """
    class LlamaForCausalLM:
        def get_embed_and_head(self):
            return None, None

    EntryClass = LlamaForCausalLM
"""
SPARK = """
    class SparkSpeculator:
        def __init__(self, target_worker):
            self.target_worker = target_worker

        def sample(self):
            return self.target_worker.model_runner.model.compute_spark_logits()
"""
FLASH = """
    class FlashSpeculator:
        def __init__(self, target_worker):
            self.target_worker = target_worker

        def sample(self):
            return self.target_worker.model_runner.model.compute_flash_logits()
"""


def _served(analysis, member: str) -> list[frozenset[str] | None]:
    return [site.algorithms for entry in analysis.contract.entries if entry.member == member
            for site in entry.call_sites]


def _tree(tmp_path, table: str):
    return make_tree(tmp_path, {
        **PACKAGES, SPEC_INFO_PATH: SPEC_INFO, "pkg/models/llama.py": LLAMA,
        "pkg/speculative/spark.py": SPARK, "pkg/speculative/flash.py": FLASH, "pkg/speculative/table.py": table,
    })


@pytest.mark.parametrize("table", [
    # the classes themselves, keyed by the option's strings
    """
    from pkg.speculative.flash import FlashSpeculator
    from pkg.speculative.spark import SparkSpeculator

    SPECULATORS = {"dspark": SparkSpeculator, "dflash": FlashSpeculator}


    def make_speculator(method, target_worker):
        return SPECULATORS[method](target_worker)
    """,
    # (module, class) pairs imported when picked, keyed by the enum's members
    """
    import importlib

    from pkg.speculative.spec_info import SpeculativeAlgorithm

    _LAZY: dict = {
        SpeculativeAlgorithm.DSPARK: ("pkg.speculative.spark", "SparkSpeculator"),
        SpeculativeAlgorithm.DFLASH: ("pkg.speculative.flash", "FlashSpeculator"),
    }


    def make_speculator(algorithm, target_worker):
        module, name = _LAZY[algorithm]
        return getattr(importlib.import_module(module), name)(target_worker)
    """,
], ids=["classes", "lazy-pairs"])
def test_a_class_a_table_picks_by_an_algorithm_s_name_runs_for_that_algorithm_only(tmp_path, table):
    analysis = analyze(_tree(tmp_path, table))
    assert _served(analysis, "compute_spark_logits") == [frozenset({"DSPARK"})]
    assert _served(analysis, "compute_flash_logits") == [frozenset({"DFLASH"})]


def test_a_class_a_decorator_registers_under_an_algorithm_s_name_runs_for_that_algorithm_only(tmp_path):
    registry = """
        REGISTRY = {}


        def register(*names):
            def add(cls):
                REGISTRY.update(dict.fromkeys(names, cls))
                return cls
            return add
    """
    root = make_tree(tmp_path, {
        **PACKAGES, SPEC_INFO_PATH: SPEC_INFO, "pkg/models/llama.py": LLAMA, "pkg/speculative/registry.py": registry,
        "pkg/speculative/spark.py": "from pkg.speculative.registry import register\n\n\n@register('dspark')\n"
                                    + SPARK.strip().replace("\n    ", "\n"),
        "pkg/speculative/flash.py": "from pkg.speculative.registry import register\n\n\n@register('dflash', 'dspark')\n"
                                    + FLASH.strip().replace("\n    ", "\n"),
    })
    analysis = analyze(root)
    assert _served(analysis, "compute_spark_logits") == [frozenset({"DSPARK"})]
    assert _served(analysis, "compute_flash_logits") == [frozenset({"DFLASH", "DSPARK"})]


def test_a_table_keyed_by_other_names_says_nothing_of_runs(tmp_path):
    table = """
        from pkg.speculative.flash import FlashSpeculator
        from pkg.speculative.spark import SparkSpeculator

        BY_DTYPE = {"fp8": SparkSpeculator, "bf16": FlashSpeculator}
    """
    analysis = analyze(_tree(tmp_path, table))
    assert _served(analysis, "compute_spark_logits") == [None]
    assert _served(analysis, "compute_flash_logits") == [None]


REGISTRY_SPEC_INFO = """
    class SpeculativeAlgorithm:
        _by_name = {}
        _tags = {}

        def __init__(self, name):
            self.name = name

        @classmethod
        def register(cls, name, *, aliases=()):
            algorithm = cls._by_name[name.upper()] = cls(name.upper())
            setattr(cls, name.upper(), algorithm)
            return algorithm

        def _tagged(self, tag):
            return self.name in type(self)._tags.get(tag, ())

        def is_none(self):
            return self is SpeculativeAlgorithm.NONE

        def is_eagle(self):
            return self._tagged("EAGLE")

        def is_eagle3(self):
            return self._tagged("EAGLE3")

        def is_ngram(self):
            return self._tagged("NGRAM")


    def register_algorithm(name, worker_cls, *, tags=()):
        algorithm = SpeculativeAlgorithm.register(name)
        for tag in tags:
            SpeculativeAlgorithm._tags.setdefault(tag, set()).add(algorithm.name)
        return algorithm


    def _eagle_worker(**kwargs):
        from pkg.speculative.eagle_worker import EAGLEWorker
        return EAGLEWorker(**kwargs)


    def _ngram_worker(**kwargs):
        from pkg.speculative.ngram_worker import NgramWorker
        return NgramWorker(**kwargs)


    SpeculativeAlgorithm.register("NONE")
    register_algorithm("EAGLE", worker_cls=_eagle_worker, tags=("EAGLE",))
    register_algorithm("EAGLE3", worker_cls=_eagle_worker, tags=("EAGLE", "EAGLE3"))
    register_algorithm("NGRAM", worker_cls=_ngram_worker, tags=("NGRAM",))
"""
EAGLE_WORKER = """
    class EAGLEWorker:
        def __init__(self, target_worker, algorithm):
            target_worker.model_runner.model.get_embed_and_head()
            if algorithm.is_eagle3():
                target_worker.model_runner.model.set_eagle3_layers_to_capture()
            if not algorithm.is_none():
                target_worker.model_runner.model.get_input_embeddings()
"""


def _registry_tree(tmp_path):
    return make_tree(tmp_path, {
        **PACKAGES, SPEC_INFO_PATH: REGISTRY_SPEC_INFO, "pkg/models/llama.py": LLAMA,
        "pkg/speculative/eagle_worker.py": EAGLE_WORKER,
        "pkg/speculative/ngram_worker.py": """
            class NgramWorker:
                def __init__(self, target_worker):
                    target_worker.model_runner.model.get_ngram_table()
        """,
    })


def test_an_algorithm_class_that_registers_its_names_at_import_has_those_names(tmp_path):
    release = analyze(_registry_tree(tmp_path)).contract.release
    assert release is not None and release.derived
    assert release.names == ("EAGLE", "EAGLE3", "NGRAM")  # NONE is no algorithm


def test_a_predicate_that_tests_a_registration_tag_holds_for_the_algorithms_registered_with_it(tmp_path):
    analysis = analyze(_registry_tree(tmp_path))
    assert _served(analysis, "set_eagle3_layers_to_capture") == [frozenset({"EAGLE3"})]
    # ``self is SpeculativeAlgorithm.NONE``: the registered NONE, so its negation is every other run
    assert _served(analysis, "get_input_embeddings") == [frozenset({"EAGLE", "EAGLE3"})]


def test_a_factory_a_registration_call_passes_builds_its_workers_for_that_algorithm_only(tmp_path):
    analysis = analyze(_registry_tree(tmp_path))
    assert _served(analysis, "get_embed_and_head") == [frozenset({"EAGLE", "EAGLE3"})]
    assert _served(analysis, "get_ngram_table") == [frozenset({"NGRAM"})]
