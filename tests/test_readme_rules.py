"""The README's table of diagnostic codes is the rule registry's own (engine/rules.py), and every code it
lists has the section its anchor points to."""

from pathlib import Path

from spec_contract.engine.rules import RULES, readme_section

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_rules_section_is_generated_from_the_registry():
    text = README.read_text(encoding="utf-8")
    start = "<!-- rules-table: generated from spec_contract.engine.rules.readme_section() -->\n"
    section = text.split(start, 1)[1].split("\n<!-- /rules-table -->", 1)[0]
    assert section == readme_section(), "regenerate the README section from readme_section()"
    for rule in RULES:  # GitHub's heading anchors: lower case, spaces as dashes
        heading = f"#### {rule.code} {rule.name}"
        assert heading in section and heading[5:].lower().replace(" ", "-") == rule.anchor
