"""The .vsix users install carries no test code: the end-to-end test hook (hook/) is only in the test build
that vscode_harness.py installs into code-server. Needs npm and the extension's npm packages, not code-server."""

from __future__ import annotations

import json
import zipfile

from vscode_harness import BUNDLE_IN_VSIX, package_extension, require_build_tools, with_test_hook

# Strings of the hook that survive minification: the environment variable it reads, commands and a wait only it
# uses. Each must be in the test build, or its absence from the shipped bundle would prove nothing.
HOOK_MARKERS = [
    "SPEC_CONTRACT_TEST_REPORT",
    "vscode.executeHoverProvider",
    "vscode.executeCodeActionProvider",
    "the contract view to show the contract",
]


def bundle_of(vsix) -> str:
    with zipfile.ZipFile(vsix) as package:
        return package.read(BUNDLE_IN_VSIX).decode("utf-8")


def test_shipped_bundle_has_no_test_hook(tmp_path):
    require_build_tools()
    shipped = package_extension()
    with zipfile.ZipFile(shipped) as package:
        ours = [name for name in package.namelist() if not name.startswith(("extension/bundled/libs/", "extension/bundled/native/"))]
        assert not [name for name in ours if "hook" in name.lower()], ours
    assert [marker for marker in HOOK_MARKERS if marker in bundle_of(shipped)] == []
    assert [marker for marker in HOOK_MARKERS if marker not in bundle_of(with_test_hook(shipped, tmp_path))] == []


def test_the_vsix_carries_the_server_for_its_platform():
    """What runs with no pip step (issue 23, item 1): the launcher, the server and its pure-Python dependencies,
    and libcst compiled for each supported CPython, in a .vsix marked for the one platform those are built for."""
    require_build_tools()
    with zipfile.ZipFile(package_extension()) as package:
        names = set(package.namelist())
        manifest = json.loads(package.read("extension/bundled/manifest.json"))
        vsixmanifest = package.read("extension.vsixmanifest").decode()
    assert "extension/bundled/tool/server.py" in names
    for module in ("spec_contract/__main__.py", "pygls/server.py", "lsprotocol/types.py", "cattrs/__init__.py",
                   "attrs/__init__.py"):
        assert f"extension/bundled/libs/{module}" in names, module
    for version in manifest["pythons"]:
        native = f"extension/bundled/native/cp{version.replace('.', '')}/libcst/"
        assert any(name.startswith(native) and name.endswith((".so", ".pyd")) for name in names), native
    assert not [name for name in names if name.startswith("extension/bundled/libs/") and name.endswith((".so", ".pyd"))]
    assert f'TargetPlatform="{manifest["target"]}"' in vsixmanifest
