"""The README's settings table is the schema's own (one list of keys, their kinds and docs, in config.py)."""

import json
from pathlib import Path

from spec_contract.engine.config import SETTINGS, editor_settings_table, settings_table
from spec_contract.engine.read.discovery import RULE
from spec_contract.engine.rules import readme_section

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_settings_table_is_generated_from_the_schema():
    text = README.read_text(encoding="utf-8")
    start = "<!-- settings-table: generated from spec_contract.engine.config.settings_table() -->\n"
    table = text.split(start, 1)[1].split("\n<!-- /settings-table -->", 1)[0]
    assert table == settings_table(), "regenerate the README table from settings_table()"
    assert all(f"`{s.name}`" in table for s in SETTINGS)


def test_readme_states_the_discovery_rule():
    assert " ".join(RULE.split()) in " ".join(README.read_text(encoding="utf-8").split())


EXTENSION = README.parent / "vscode-client"


def test_extension_readme_settings_and_codes_come_from_the_same_schema():
    """The VS Code extension's README (issue 23, item 7): its settings table is the schema's editor keys and its
    codes section the registry's, as in the main README; package.json declares each of those settings."""
    text = (EXTENSION / "README.md").read_text(encoding="utf-8")
    start = "<!-- settings-table: generated from spec_contract.engine.config.editor_settings_table() -->\n"
    assert text.split(start, 1)[1].split("\n<!-- /settings-table -->", 1)[0] == editor_settings_table()
    start = "<!-- rules-table: generated from spec_contract.engine.rules.readme_section() -->\n"
    assert text.split(start, 1)[1].split("\n<!-- /rules-table -->", 1)[0] == readme_section()
    declared = json.loads((EXTENSION / "package.json").read_text())["contributes"]["configuration"]["properties"]
    for setting in SETTINGS:
        if setting.where != "tree":
            key = f"specContract.{setting.camel}"
            assert any(name == key or name.startswith(f"{key}.") for name in declared), key


def test_extension_readme_names_every_command():
    """Issue 37, item 6: every command package.json contributes is in the extension's README, by the name the
    command palette shows ("spec-contract: Show support matrix" was left out)."""
    text = (EXTENSION / "README.md").read_text(encoding="utf-8")
    commands = json.loads((EXTENSION / "package.json").read_text())["contributes"]["commands"]
    assert [c["title"] for c in commands if f"**{c['category']}: {c['title']}**" not in text] == []
