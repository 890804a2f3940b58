"""Settings: merging the sources, validating values, and what reaches the engine."""

from spec_contract.lsp.settings import DEFAULT_DEBOUNCE_MS, Settings, merge, parse, section_of


def test_section_is_found_whether_nested_or_not():
    assert section_of({"specContract": {"profile": "sglang"}}) == {"profile": "sglang"}
    assert section_of({"profile": "sglang"}) == {"profile": "sglang"}
    assert section_of(None) == {}
    assert section_of("nonsense") == {}


def test_folder_settings_win_key_by_key_and_severities_merge_per_code():
    merged = merge(
        {"profile": "sglang", "severity": {"SC001": "error", "SC002": "hint"}, "debounce": 100},
        {"severity": {"SC002": "warning"}, "debounce": None},
    )
    assert merged == {"profile": "sglang", "severity": {"SC001": "error", "SC002": "warning"}, "debounce": 100}


def test_valid_settings_parse_without_problems():
    settings, problems = parse(
        {"enable": False, "debounce": 40, "profile": "sglang", "severity": {"SC002": "Warning"},
         "include": ["srt/**"], "exclude": "tests/**"}
    )
    assert problems == []
    assert settings == Settings(
        enable=False, debounce_ms=40, profile="sglang", severity={"SC002": "warning"},
        include=("srt/**",), exclude=("tests/**",),
    )
    assert settings.overrides() == {
        "profile": "sglang", "severity": {"SC002": "warning"}, "include": ["srt/**"], "exclude": ["tests/**"]
    }


def test_camel_case_keys_are_accepted():
    settings, problems = parse({"Debounce": 10})
    assert problems == [] and settings.debounce_ms == 10


def test_each_invalid_value_is_reported_and_only_that_key_falls_back():
    settings, problems = parse(
        {"debounce": "soon", "enable": "yes", "severity": {"SC001": "loud", "SC999": "error", "SC002": "hint"},
         "include": [1], "colour": "red", "profile": ""}
    )
    assert settings.debounce_ms == DEFAULT_DEBOUNCE_MS
    assert settings.enable is True
    assert settings.severity == {"SC002": "hint"}
    assert settings.include is None and settings.profile is None
    text = "\n".join(problems)
    for fragment in ("specContract.debounce", "specContract.enable", "specContract.severity.SC001",
                     "'SC999'", "specContract.include", "specContract.colour", "specContract.profile"):
        assert fragment in text
    assert len(problems) == 7


def test_negative_or_huge_debounce_is_rejected():
    assert parse({"debounce": -1})[1] and parse({"debounce": 10**9})[1] and parse({"debounce": True})[1]


def test_defaults_send_no_overrides_to_the_engine():
    assert Settings().overrides() == {}


def test_settings_the_editor_extension_keeps_for_itself_are_not_reported():
    """VS Code sends the whole specContract section, the client's own keys included."""
    settings, problems = parse({"interpreter": "/usr/bin/python3", "server": {"command": [], "args": []},
                                "trace": {"server": "off"}, "profile": "sglang"})
    assert problems == []
    assert settings == Settings(profile="sglang")
    _, problems = parse({"interpeter": "/usr/bin/python3"})
    assert problems == ["specContract.interpeter is not a known setting; ignoring it"]


def test_empty_glob_lists_do_not_override_the_pyproject():
    """VS Code sends its defaults (``include: []``) whether or not the user set them."""
    settings, problems = parse({"include": [], "exclude": []})
    assert problems == [] and settings.overrides() == {}


def test_editor_and_pyproject_share_one_validation_and_one_message():
    """One schema: the same wrong value gets the same words from the editor and from a pyproject."""
    from spec_contract.engine.config import ConfigError, load_config

    _, problems = parse({"select": 5})
    try:
        load_config(None, overrides={"select": 5})
    except ConfigError as exc:
        assert str(exc).endswith(problems[0].split(": ", 1)[1].rsplit(";", 1)[0])
    else:
        raise AssertionError("select = 5 was accepted")


def test_tree_only_keys_are_named_as_such_in_the_editor():
    settings, problems = parse({"workers": ["x/*.py"], "select": ["SC001"]})
    assert problems == ["specContract.workers is not a known setting (it is read from pyproject.toml only); ignoring it"]
    assert settings.overrides() == {"select": ["SC001"]}
