"""The README's settings table is the schema's own (one list of keys, their kinds and docs, in config.py)."""

from pathlib import Path

from spec_contract.engine.config import SETTINGS, settings_table
from spec_contract.engine.read.discovery import RULE

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_settings_table_is_generated_from_the_schema():
    text = README.read_text(encoding="utf-8")
    start = "<!-- settings-table: generated from spec_contract.engine.config.settings_table() -->\n"
    table = text.split(start, 1)[1].split("\n<!-- /settings-table -->", 1)[0]
    assert table == settings_table(), "regenerate the README table from settings_table()"
    assert all(f"`{s.name}`" in table for s in SETTINGS)


def test_readme_states_the_discovery_rule():
    assert " ".join(RULE.split()) in " ".join(README.read_text(encoding="utf-8").split())
