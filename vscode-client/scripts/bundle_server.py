"""Puts the language server into the extension, so that it runs with no pip step (issue 23, item 1).

The layout is the one of Microsoft's vscode-python-tools-extension-template: ``bundled/libs`` holds the server
and its pure-Python dependencies, installed with ``pip install --target``; ``bundled/tool/server.py`` puts that
folder first on ``sys.path`` of the user's own interpreter and starts the server. libcst, which the quick fixes
use (the analysis does not import it), is compiled per CPython version and platform, so it goes into
``bundled/native/cp3XY``, one folder per supported CPython, for one platform: a .vsix is built per vsce target.
``bundled/wheels`` keeps the server's own wheel, which the extension offers to pip-install into an environment.

    python3 scripts/bundle_server.py [--target linux-x64]     # default: $VSCODE_TARGET, else this machine's

It prints the target, which `npm run package` hands to `vsce package --target`.

Needs pip and the package registry (or a pip cache); writes only under ``bundled/`` (not committed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

try:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
except ModuleNotFoundError:  # an environment without packaging still has pip's copy
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.utils import canonicalize_name

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

CLIENT = Path(__file__).resolve().parents[1]
REPO = CLIENT.parent
BUNDLED = CLIENT / "bundled"
#: The CPython versions the server supports (pyproject's requires-python) that libcst publishes wheels for.
PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14"]
#: vsce's target names and the wheel platform tags pip accepts for them.
PLATFORMS = {
    "linux-x64": ["manylinux_2_28_x86_64", "manylinux2014_x86_64"],
    "linux-arm64": ["manylinux_2_28_aarch64", "manylinux2014_aarch64"],
    "darwin-x64": ["macosx_10_13_x86_64"],
    "darwin-arm64": ["macosx_11_0_arm64"],
    "win32-x64": ["win_amd64"],
}
COMPILED = "libcst"


def host_target() -> str:
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}[platform.machine().lower()]
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "win32"}[platform.system()]
    return f"{system}-{machine}"


def dependencies() -> tuple[list[str], str]:
    """pyproject's dependencies: the pure ones, and libcst's requirement."""
    listed = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    compiled = [req for req in listed if req.startswith(COMPILED)]
    assert len(compiled) == 1, listed
    return [req for req in listed if req not in compiled], compiled[0]


def missing_for_older_pythons(libs: Path) -> list[str]:
    """Requirements of the installed distributions that some supported Python needs and ``libs`` lacks. pip
    evaluates markers for the Python that runs it, whatever --python-version says, so ``exceptiongroup; python_version
    < '3.11'`` is skipped when the bundle is built on 3.11."""
    installed = {canonicalize_name(meta.name.split("-")[0]) for meta in libs.glob("*.dist-info")}
    wanted = []
    for metadata in libs.glob("*.dist-info/METADATA"):
        for line in metadata.read_text().splitlines():
            if not line.startswith("Requires-Dist: "):
                continue
            req = Requirement(line.removeprefix("Requires-Dist: "))
            needed = req.marker is None or any(req.marker.evaluate({"python_version": v, "extra": ""}) for v in PYTHONS)
            if needed and canonicalize_name(req.name) not in installed | {COMPILED}:
                wanted.append(f"{req.name}{req.specifier}")
    return sorted(set(wanted))


def pip(*args: str) -> None:
    # pip's own output goes to stderr: standard output is the target's name alone, for `vsce package --target`.
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", *args], check=True,
                   stdout=sys.stderr)


def prune(folder: Path) -> None:
    """What pip --target leaves that the server never reads: console scripts, byte code and libcst's own tests."""
    shutil.rmtree(folder / "bin", ignore_errors=True)
    unread = [*folder.rglob("__pycache__"), *folder.glob("libcst/**/tests")]
    for path in unread:
        shutil.rmtree(path, ignore_errors=True)


def bundle(target: str) -> dict:
    for part in ("libs", "native", "wheels"):
        shutil.rmtree(BUNDLED / part, ignore_errors=True)
    wheels, libs = BUNDLED / "wheels", BUNDLED / "libs"
    pip("wheel", "--no-deps", "--wheel-dir", str(wheels), str(REPO))
    (wheel,) = wheels.glob("spec_contract-*.whl")
    pip("install", "--no-compile", "--no-deps", "--target", str(libs), str(wheel))
    pure, compiled = dependencies()
    pure = [req for req in pure if Requirement(req).marker is None]  # the marked ones come back below, if needed
    while pure:
        # --platform any with --only-binary: pip fails here if a dependency ever stops being pure Python.
        pip("install", "--no-compile", "--target", str(libs), "--only-binary", ":all:", "--implementation", "py",
            "--platform", "any", "--upgrade", *pure)
        pure = missing_for_older_pythons(libs)
    prune(libs)
    platforms = [arg for tag in PLATFORMS[target] for arg in ("--platform", tag)]
    for version in PYTHONS:
        native = BUNDLED / "native" / f"cp{version.replace('.', '')}"
        pip("install", "--no-compile", "--no-deps", "--target", str(native), "--only-binary", ":all:",
            "--implementation", "cp", "--python-version", version, *platforms, compiled)
        prune(native)
    manifest = {"target": target, "pythons": PYTHONS, "wheel": wheel.name}
    (BUNDLED / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=sorted(PLATFORMS), default=os.environ.get("VSCODE_TARGET") or host_target())
    print(bundle(parser.parse_args().target)["target"])


if __name__ == "__main__":
    main()
