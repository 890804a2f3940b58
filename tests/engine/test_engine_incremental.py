"""One :class:`Project` across edits: editor overlays, files changed on disk, and the persistent cache."""

from __future__ import annotations

import os
import time

from engine_trees import LLAMA, WORKER, base_tree, contract, findings
from spec_contract.engine.check import batch as checking_module
from spec_contract.engine.config import load_config
from spec_contract.engine.project import Project
from spec_contract.engine.read import sources as sources_module

WRAPPER_PATH = "pkg/models/llava.py"
WRAPPER = """\
from pkg.models.llama import LlamaForCausalLM


class LlavaForConditionalGeneration:
    def __init__(self, config):
        self.language_model = LlamaForCausalLM(config)
{extra}

EntryClass = LlavaForConditionalGeneration
"""
GET_FORWARD = """
    def get_embed_and_head(self):
        return self.language_model.get_embed_and_head()
"""


def wrapper(extra: str = "") -> str:
    return WRAPPER.format(extra=extra)


def finding(member: str, role: str, line: int) -> tuple:
    """A missing forward; a draft member of this (not draft-shaped) wrapper is a warning (SC005)."""
    code, severity = ("SC005", "warning") if role == "draft" else ("SC001", "error")
    return (code, "LlavaForConditionalGeneration", member, (role,), "language_model", "LlamaForCausalLM",
            severity, ((WORKER, line, False),))


BOTH = [finding("get_embed_and_head", "target", 5), finding("set_embed_and_head", "draft", 6)]
ONLY_SET = [finding("set_embed_and_head", "draft", 6)]


def project(root, **kwargs) -> Project:
    return Project(root, load_config(root), **({"use_cache": False} | kwargs))


def test_overlay_with_a_syntax_error_keeps_the_last_good_summary_then_the_repair_counts(tmp_path):
    root = base_tree(tmp_path, {WRAPPER_PATH: wrapper()})
    path = str((root / WRAPPER_PATH).resolve())
    proj = project(root)
    assert findings(proj.analyze()) == BOTH

    proj.set_overlay(path, wrapper("\n    def get_embed_and_head(self\n"))
    broken = proj.analyze()
    assert findings(broken) == BOTH
    assert broken.problems[path].startswith("SyntaxError")

    proj.set_overlay(path, wrapper(GET_FORWARD))
    repaired = proj.analyze()
    assert findings(repaired) == ONLY_SET
    assert path not in repaired.problems
    assert repaired.generation > broken.generation


def test_overlay_applies_over_disk_and_clearing_it_goes_back_to_disk(tmp_path):
    root = base_tree(tmp_path, {WRAPPER_PATH: wrapper()})
    path = str((root / WRAPPER_PATH).resolve())
    proj = project(root)
    proj.set_overlay(path, wrapper(GET_FORWARD))
    assert findings(proj.analyze()) == ONLY_SET
    proj.clear_overlay(path)
    assert findings(proj.analyze()) == BOTH


def test_syntax_error_on_the_first_read_gives_no_spurious_findings(tmp_path):
    root = base_tree(tmp_path, {WRAPPER_PATH: wrapper("\n    def get_embed_and_head(self\n")})
    analysis = project(root).analyze()
    assert findings(analysis) == []
    assert analysis.stats.files_skipped == {"syntax-error": 1}


def test_invalidate_after_the_inner_loses_a_method_on_disk(tmp_path):
    root = base_tree(tmp_path, {WRAPPER_PATH: wrapper()})
    proj = project(root)
    assert findings(proj.analyze()) == BOTH

    llama = root / "pkg/models/llama.py"
    llama.write_text(llama.read_text().replace("def get_embed_and_head(self):\n        return None, None\n", ""))
    assert "get_embed_and_head" not in llama.read_text()
    assert findings(proj.analyze()) == BOTH  # nothing told the project yet: the last analysis stands
    proj.invalidate(str(llama.resolve()))
    assert findings(proj.analyze()) == ONLY_SET


def test_invalidate_of_a_new_worker_file_adds_its_contract(tmp_path):
    root = base_tree(tmp_path, {WRAPPER_PATH: wrapper(GET_FORWARD)})
    proj = project(root)
    assert findings(proj.analyze()) == ONLY_SET

    new_worker = root / "pkg/speculative/mtp_worker.py"
    new_worker.write_text("def load(target_model_runner):\n    return target_model_runner.model.capture()\n")
    (root / "pkg/models/llama.py").write_text((root / "pkg/models/llama.py").read_text().replace(
        "    def __init__", "    def capture(self):\n        pass\n\n    def __init__"))
    proj.invalidate(str(new_worker.resolve()))
    proj.invalidate(str((root / "pkg/models/llama.py").resolve()))
    analysis = proj.analyze()
    assert findings(analysis) == [
        ("SC001", "LlavaForConditionalGeneration", "capture", ("target",), "language_model", "LlamaForCausalLM",
         "error", (("pkg/speculative/mtp_worker.py", 2, False),)),
        *ONLY_SET,
    ]


def test_unchanged_files_are_not_parsed_again(tmp_path):
    root = base_tree(tmp_path, {WRAPPER_PATH: wrapper()})
    path = str((root / WRAPPER_PATH).resolve())
    proj = project(root)
    assert proj.analyze().stats.files_parsed > 1
    proj.set_overlay(path, wrapper(GET_FORWARD))
    assert proj.analyze().stats.files_parsed == 1


def test_persistent_cache_gives_the_same_result_as_no_cache(tmp_path):
    root = base_tree(tmp_path / "tree", {WRAPPER_PATH: wrapper()})
    cache_dir = tmp_path / "cache"
    uncached = project(root).analyze()
    cold = project(root, use_cache=True, cache_dir=cache_dir).analyze()
    warm = project(root, use_cache=True, cache_dir=cache_dir).analyze()

    assert findings(warm) == findings(cold) == findings(uncached) == BOTH
    assert contract(warm) == contract(cold) == contract(uncached)
    assert warm.findings == uncached.findings
    assert warm.contract == uncached.contract
    assert cold.stats.files_from_cache == 0
    assert cold.stats.files_parsed > 0
    # Nothing changed: the saved results stand, without parsing or even unpickling a summary.
    assert warm.stats.files_parsed == warm.stats.files_from_cache == 0


def test_saved_results_are_redone_for_what_changed_on_disk_since(tmp_path):
    root = base_tree(tmp_path / "tree", {WRAPPER_PATH: wrapper()})
    cache_dir = tmp_path / "cache"
    assert findings(project(root, use_cache=True, cache_dir=cache_dir).analyze()) == BOTH
    llama = root / "pkg/models/llama.py"
    llama.write_text(llama.read_text().replace("def get_embed_and_head", "def get_embed_and_head_renamed"))
    analysis = project(root, use_cache=True, cache_dir=cache_dir).analyze()
    assert findings(analysis) == ONLY_SET
    assert analysis.findings == project(root).analyze().findings
    assert analysis.stats.files_parsed == 1  # only the edited inner model was read again


def _age(root, seconds: float) -> None:
    """Date every file of the tree ``seconds`` back, as files are that nobody touched lately."""
    when = time.time() - seconds
    for path in root.rglob("*.py"):
        os.utime(path, (when, when))


def _same_size_rename(path) -> None:
    """Rename the inner's method without changing the file's size: only its content tells."""
    path.write_text(path.read_text().replace("def get_embed_and_head(", "def get_embed_and_hea_("))


def test_a_warm_run_reads_no_file_whose_signature_is_unchanged(tmp_path, monkeypatch):
    root = base_tree(tmp_path / "tree", {WRAPPER_PATH: wrapper()})
    _age(root, 3600)
    cache_dir = tmp_path / "cache"
    project(root, use_cache=True, cache_dir=cache_dir).analyze()
    read = []
    real_read = sources_module.read_bytes
    monkeypatch.setattr(sources_module, "read_bytes", lambda path: read.append(path) or real_read(path))
    analysis = project(root, use_cache=True, cache_dir=cache_dir).analyze()
    assert findings(analysis) == BOTH
    assert read == []


def test_a_warm_run_sees_a_same_size_edit_by_its_new_modification_time(tmp_path):
    root = base_tree(tmp_path / "tree", {WRAPPER_PATH: wrapper()})
    _age(root, 3600)
    cache_dir = tmp_path / "cache"
    assert findings(project(root, use_cache=True, cache_dir=cache_dir).analyze()) == BOTH
    llama = root / "pkg/models/llama.py"
    _same_size_rename(llama)
    _age(root, 1800)
    assert findings(project(root, use_cache=True, cache_dir=cache_dir).analyze()) == ONLY_SET


def test_files_written_just_before_a_run_are_hashed_again_on_the_next(tmp_path):
    # A file written within the timestamp's granularity of the save could change again unseen by its
    # signature, so a fresh file's signature is not trusted: here the edit keeps size and mtime exactly.
    root = base_tree(tmp_path / "tree", {WRAPPER_PATH: wrapper()})
    cache_dir = tmp_path / "cache"
    assert findings(project(root, use_cache=True, cache_dir=cache_dir).analyze()) == BOTH
    llama = root / "pkg/models/llama.py"
    stat = llama.stat()
    _same_size_rename(llama)
    os.utime(llama, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert findings(project(root, use_cache=True, cache_dir=cache_dir).analyze()) == ONLY_SET


def test_a_file_changed_on_disk_just_after_it_was_read_is_hashed_again(tmp_path, monkeypatch):
    # Written shortly before the run, then saved again by another program right after the analysis read
    # it, in the same timestamp tick: size, mtime and inode are unchanged, so only the content tells.
    root = base_tree(tmp_path / "tree", {WRAPPER_PATH: wrapper()})
    _age(root, 1.5)
    llama = root / "pkg/models/llama.py"
    real_read = sources_module.read_bytes
    written = []

    def read_then_someone_writes(path):
        data = real_read(path)
        if path == str(llama) and not written:
            stat = llama.stat()
            _same_size_rename(llama)
            os.utime(llama, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            written.append(path)
            time.sleep(0.6)  # the rest of a long analysis: past the racy window, counted from the save
        return data

    monkeypatch.setattr(sources_module, "read_bytes", read_then_someone_writes)
    cache_dir = tmp_path / "cache"
    assert findings(project(root, use_cache=True, cache_dir=cache_dir).analyze()) == BOTH
    monkeypatch.setattr(sources_module, "read_bytes", real_read)
    assert findings(project(root, use_cache=True, cache_dir=cache_dir).analyze()) == ONLY_SET


def test_an_editor_query_between_analyses_does_not_hide_a_later_change_on_disk(tmp_path):
    root = base_tree(tmp_path / "tree", {WRAPPER_PATH: wrapper()})
    cache_dir = tmp_path / "cache"
    project(root, use_cache=True, cache_dir=cache_dir).analyze()
    proj = project(root, use_cache=True, cache_dir=cache_dir)  # a server starting on a warm cache
    analysis = proj.analyze()
    assert analysis.implementers("get_embed_and_head")  # a hover on a call site reads the model files
    llama = root / "pkg/models/llama.py"
    llama.write_text(llama.read_text().replace("def get_embed_and_head", "def get_embed_and_head_renamed"))
    proj.invalidate(str(llama.resolve()))
    assert findings(proj.analyze()) == ONLY_SET
    assert findings(project(root, use_cache=True, cache_dir=cache_dir).analyze()) == ONLY_SET


def test_persistent_cache_is_keyed_by_content(tmp_path):
    root = base_tree(tmp_path / "tree", {WRAPPER_PATH: wrapper()})
    cache_dir = tmp_path / "cache"
    project(root, use_cache=True, cache_dir=cache_dir).analyze()
    (root / WRAPPER_PATH).write_text(wrapper(GET_FORWARD))
    analysis = project(root, use_cache=True, cache_dir=cache_dir).analyze()
    assert findings(analysis) == ONLY_SET
    assert analysis.stats.files_parsed == 1


def test_an_edit_that_leaves_the_summary_as_it_was_checks_nothing_again(tmp_path, monkeypatch):
    """A keystroke inside a method body or a comment changes no member, delegate or position the file's
    summary holds: the classes that read the file keep their findings without being checked again."""
    root = base_tree(tmp_path, {WRAPPER_PATH: wrapper()})
    path, llama = (str((root / rel).resolve()) for rel in (WRAPPER_PATH, "pkg/models/llama.py"))
    proj = project(root)
    proj.set_overlay(path, wrapper())  # open in an editor
    llama_text = (root / "pkg/models/llama.py").read_text()
    proj.set_overlay(llama, llama_text)
    assert findings(proj.analyze()) == BOTH
    checked = []
    real_check = checking_module.check_class
    monkeypatch.setattr(checking_module, "check_class", lambda index, key, *rest: checked.append(key.qualname)
                        or real_check(index, key, *rest))

    proj.set_overlay(llama, llama_text.replace("config\n", "config  # a comment\n"))  # same members and lines
    proj.set_overlay(path, wrapper().replace("(config)", "(config )"))  # after every span on its line
    analysis = proj.analyze()
    assert findings(analysis) == BOTH and checked == []
    assert analysis.changed_paths == {path, llama}  # the texts did change: positions are converted anew

    proj.set_overlay(path, wrapper(GET_FORWARD))  # a new member: the wrapper is checked again
    assert findings(proj.analyze()) == ONLY_SET and checked == ["LlavaForConditionalGeneration"]

    # New lines and a removed one move what is below them: the findings move with them, unchecked
    w1 = "\n" + wrapper(GET_FORWARD)  # above everything
    w2 = w1.replace("\n\n    def get_embed", "\n\n\n    def get_embed")  # between two members
    w3 = w2.replace("\n\n\nEntryClass", "\n\nEntryClass")  # one line less, below the class
    l1 = llama_text.replace("\n\n    def set_embed", "\n\n\n\n    def set_embed")  # two, above the provider
    l2 = l1.replace("\n\n", "\n", 1)  # one line less, above them all
    for wrapper_text, llama_moved in [(w1, llama_text), (w2, llama_text), (w3, llama_text), (w3, l1), (w3, l2)]:
        fresh = project(root)
        fresh.set_overlay(path, wrapper_text)
        fresh.set_overlay(llama, llama_moved)
        expected = fresh.analyze().findings
        checked.clear()
        proj.set_overlay(path, wrapper_text)
        proj.set_overlay(llama, llama_moved)
        assert proj.analyze().findings == expected  # every span where a new analysis puts it
        assert checked == []


def test_overlay_of_a_worker_changes_the_contract_and_the_findings(tmp_path):
    root = base_tree(tmp_path, {WRAPPER_PATH: wrapper()})
    worker = str((root / WORKER).resolve())
    proj = project(root)
    assert findings(proj.analyze()) == BOTH
    proj.set_overlay(worker, (root / WORKER).read_text().replace(
        "self.draft_model_runner.model.set_embed_and_head(embed, head)", "pass"))
    analysis = proj.analyze()
    assert [(e.role, e.member) for e in analysis.contract.entries] == [("target", "get_embed_and_head")]
    assert findings(analysis) == [finding("get_embed_and_head", "target", 5)]


def test_persistent_cache_keeps_package_and_module_with_the_same_text_apart(tmp_path):
    reexport = "from .llama import LlamaForCausalLM\n"
    root = base_tree(tmp_path / "tree", {
        "pkg/models/text/__init__.py": reexport,  # the package's own llama: pkg.models.text.llama
        "pkg/models/text/llama.py": LLAMA,
        "pkg/models/shim.py": reexport,  # the sibling llama: pkg.models.llama
        WRAPPER_PATH: wrapper().replace("pkg.models.llama", "pkg.models.text"),
        "pkg/models/llava2.py": wrapper().replace("pkg.models.llama", "pkg.models.shim").replace(
            "LlavaForConditionalGeneration", "Llava2"),
    })
    expected = {("LlavaForConditionalGeneration", "pkg.models.text.llama.LlamaForCausalLM"),
                ("Llava2", "pkg.models.llama.LlamaForCausalLM")}

    def providers(analysis) -> set[tuple[str, str]]:
        return {(f.class_name, f.provider.class_name) for f in analysis.findings}

    assert providers(project(root).analyze()) == expected
    cached = project(root, use_cache=True, cache_dir=tmp_path / "cache").analyze()
    assert cached.stats.files_from_cache > 0
    assert providers(cached) == expected


def test_invalidate_after_the_inner_file_is_deleted(tmp_path):
    root = base_tree(tmp_path, {WRAPPER_PATH: wrapper()})
    proj = project(root)
    assert findings(proj.analyze()) == BOTH
    llama = root / "pkg/models/llama.py"
    llama.unlink()
    proj.invalidate(str(llama.resolve()))
    analysis = proj.analyze()
    assert findings(analysis) == []  # the inner class is unknown now: nothing to say it should forward
    assert analysis.stats.files_seen == 6


def test_corrupt_cache_entries_are_misses(tmp_path):
    root = base_tree(tmp_path / "tree", {WRAPPER_PATH: wrapper()})
    cache_dir = tmp_path / "cache"
    project(root, use_cache=True, cache_dir=cache_dir).analyze()
    entries = [p for p in cache_dir.rglob("*.pickle")]
    assert entries
    for entry in entries:
        entry.write_bytes(b"not a pickle")
    analysis = project(root, use_cache=True, cache_dir=cache_dir).analyze()
    assert findings(analysis) == BOTH
    assert analysis.stats.files_from_cache == 0


def test_unwritable_cache_location_only_disables_persisting(tmp_path):
    root = base_tree(tmp_path / "tree", {WRAPPER_PATH: wrapper()})
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory should be")
    analysis = project(root, use_cache=True, cache_dir=blocker).analyze()
    assert findings(analysis) == BOTH
    assert blocker.read_text() == "a file where the cache directory should be"


def test_position_queries_still_see_every_model_file_after_an_incremental_analysis(tmp_path):
    """An edit re-reads only what changed; hover and go-to-implementation must still find the inner model."""
    root = base_tree(tmp_path, {WRAPPER_PATH: wrapper()})
    proj = project(root)
    proj.analyze()
    wrapper_path = str((root / WRAPPER_PATH).resolve())
    proj.set_overlay(wrapper_path, wrapper() + "\n# edited\n")
    analysis = proj.analyze()

    llama = str((root / "pkg/models/llama.py").resolve())
    [provider] = analysis.implementers("get_embed_and_head")
    assert (provider.path, provider.class_name) == (llama, "pkg.models.llama.LlamaForCausalLM")
    line = (root / "pkg/models/llama.py").read_text().splitlines().index("    def get_embed_and_head(self):")
    assert provider.span.line == line
    member, entries = analysis.member_definition_at(llama, line, provider.span.col)
    assert member == "get_embed_and_head" and [e.role for e in entries] == ["target"]


def test_a_focused_analysis_checks_only_the_given_files_and_the_next_whole_one_checks_all(tmp_path):
    other = WRAPPER.replace("LlavaForConditionalGeneration", "OtherVLM")
    root = base_tree(tmp_path, {WRAPPER_PATH: wrapper(), "pkg/models/other.py": other})
    proj = project(root)
    wrapper_path = str((root / WRAPPER_PATH).resolve())
    proj.set_overlay(wrapper_path, wrapper())  # an open editor buffer

    focused = proj.analyze(focus=[wrapper_path])
    assert focused.focus == {wrapper_path}
    assert {f.class_name for f in focused.findings} == {"LlavaForConditionalGeneration"}
    assert findings(focused) == BOTH

    whole = proj.analyze()
    assert whole.focus is None
    assert {f.class_name for f in whole.findings} == {"LlavaForConditionalGeneration", "OtherVLM"}
    assert [f for f in whole.findings if f.path == wrapper_path] == list(focused.findings)
    assert whole.generation > focused.generation


def test_a_whole_analysis_after_a_focused_one_checks_again_what_the_focused_one_left(tmp_path):
    """A focused analysis reads the edited file's new summary; the whole analysis after it must still see
    that the file changed, for the classes outside the focus that read it."""
    root = base_tree(tmp_path, {WRAPPER_PATH: wrapper()})
    llama = str((root / "pkg/models/llama.py").resolve())
    llama_text = (root / "pkg/models/llama.py").read_text()
    proj = project(root)
    proj.set_overlay(llama, llama_text)
    assert findings(proj.analyze()) == BOTH

    proj.set_overlay(llama, llama_text.replace("def get_embed_and_head", "def get_embedding_and_head"))
    proj.analyze(focus=[llama])  # checks LlamaForCausalLM only
    assert findings(proj.analyze()) == ONLY_SET  # the wrapper no longer lacks what its inner lost


def test_a_warm_run_on_an_unchanged_tree_writes_nothing(tmp_path):
    """Every file read has the signature and digest the cache saved for it, so there is nothing to save:
    not even for the engine package's ``__init__.py``, which each run reads before the saved signatures are
    restored (it was hashed again, and the results rewritten, on every warm run)."""
    root = base_tree(tmp_path / "tree", {WRAPPER_PATH: wrapper(), "sglang/__init__.py": ""})  # the engine package
    for path in root.rglob("*.py"):  # older than the racy window, so each signature is saved
        os.utime(path, ns=(time.time_ns() - 10**10, time.time_ns() - 10**10))
    cache_dir = tmp_path / "cache"
    project(root, use_cache=True, cache_dir=cache_dir).analyze()  # fill
    project(root, use_cache=True, cache_dir=cache_dir).analyze()  # the signatures of files hashed first

    def entries() -> dict[str, tuple[int, int]]:
        return {str(p): (p.stat().st_ino, p.stat().st_mtime_ns) for p in cache_dir.rglob("*") if p.is_file()}

    before = entries()
    warm = project(root, use_cache=True, cache_dir=cache_dir).analyze()
    assert findings(warm) == BOTH
    assert entries() == before


def test_a_focused_analysis_leaves_the_cache_writes_to_the_whole_one_after_it(tmp_path):
    """The editor's first, focused analysis answers for the open file without writing the summaries it made
    (pickling them cost a tenth of it); the whole analysis after it writes them, and a new project then
    starts from them."""
    root = base_tree(tmp_path / "tree", {WRAPPER_PATH: wrapper()})
    wrapper_path = str((root / WRAPPER_PATH).resolve())
    cache_dir = tmp_path / "cache"
    proj = project(root, use_cache=True, cache_dir=cache_dir)

    assert findings(proj.analyze(focus=[wrapper_path])) == BOTH
    assert not list(cache_dir.rglob("*.pickle"))

    assert findings(proj.analyze()) == BOTH
    summaries = [p for p in cache_dir.rglob("*.pickle") if p.parent.name != "results"]
    assert summaries

    fresh = project(root, use_cache=True, cache_dir=cache_dir)
    fresh.invalidate(wrapper_path)  # the saved results do not answer for it: its summary is read from the cache
    analysis = fresh.analyze()
    assert findings(analysis) == BOTH
    assert wrapper_path in analysis.stats.from_cache


def test_an_editor_buffer_is_summarised_whole_and_never_taken_from_the_cache(tmp_path):
    # The summary cache holds the files' lazy summaries (class statements left as text) and never a buffer's:
    # a buffer is read whole, with the statement memo its next keystroke reuses, even when its text is the
    # file's, and what is being typed is never looked up there.
    root = base_tree(tmp_path / "tree", {WRAPPER_PATH: wrapper()})
    cache_dir = tmp_path / "cache"
    project(root, use_cache=True, cache_dir=cache_dir).analyze()  # the cache now holds the wrapper's file
    path = str((root / WRAPPER_PATH).resolve())
    module = "pkg.models.llava"

    opened = project(root, use_cache=True, cache_dir=cache_dir)
    opened.set_overlay(path, (root / WRAPPER_PATH).read_text())  # opened, not yet edited
    first = opened.analyze()
    assert path not in first.stats.from_cache and path in first.stats.parsed
    summary = first.index.summary(module)
    assert summary is not None and not summary.deferred
    assert findings(first) == BOTH

    opened.set_overlay(path, wrapper(GET_FORWARD))
    typed = opened.analyze()
    assert path not in typed.stats.from_cache
    assert findings(typed) == ONLY_SET
