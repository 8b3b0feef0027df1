#!/usr/bin/env bash
# Installs what pathpool needs and builds it, on a fresh machine or an existing checkout.
# Idempotent: a second run only rebuilds what changed. Used by `make demo` and `make test`.
#
#   system packages (apt-get, when missing): python3, python3-venv, a C compiler, curl,
#   chromium and chromium-driver (for the HTML reports' browser test), clang, pkg-config,
#   libelf-dev and zlib1g-dev (for pathpool-linux's BPF programs), ethtool and iputils-ping
#   (for `pathpool emu`'s namespace testbeds)
#   Rust (rustup, when cargo is missing), a virtualenv in .venv with the Python dependencies,
#   and pathpool built in release mode (PATHPOOL_PROFILE names another Cargo profile; `make
#   test` uses fast-test, D229): the `pathpool` binary and the extension module (maturin
#   develop installs both).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}

missing=()
command -v python3 >/dev/null 2>&1 || missing+=(python3)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
command -v cc >/dev/null 2>&1 || missing+=(build-essential)
command -v curl >/dev/null 2>&1 || missing+=(curl ca-certificates)
# pathpool-linux (D330): clang compiles its BPF programs; libbpf-sys builds libbpf against
# libelf and zlib, found with pkg-config.
command -v clang >/dev/null 2>&1 || missing+=(clang)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
[ -e /usr/include/libelf.h ] || missing+=(libelf-dev)
[ -e /usr/include/zlib.h ] || missing+=(zlib1g-dev)
# `pathpool emu` forwards frames of at most one MTU: its testbeds turn segmentation offloads
# off with ethtool, and measure the emulated delay with ping (docs/emu.md).
command -v ethtool >/dev/null 2>&1 || missing+=(ethtool)
command -v ping >/dev/null 2>&1 || missing+=(iputils-ping)
# The HTML reports' test drives a real headless browser (tests/test_report_html.py): Debian's
# Chromium and its chromedriver, not a browser download of Selenium's or Playwright's own.
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
if ((${#missing[@]})); then
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    echo "bootstrap: installing ${missing[*]} with apt-get"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
  else
    echo "bootstrap: please install ${missing[*]} (no apt-get here)" >&2
    exit 1
  fi
fi

if ! command -v cargo >/dev/null 2>&1; then
  if [ ! -x "$HOME/.cargo/bin/cargo" ]; then
    echo "bootstrap: installing Rust with rustup"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs |
      sh -s -- -y --profile minimal --component clippy,rustfmt
  fi
  export PATH="$HOME/.cargo/bin:$PATH"
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "bootstrap: creating $VENV"
  python3 -m venv "$VENV"
fi
stamp="$VENV/.pathpool-deps"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "bootstrap: installing Python dependencies"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q "maturin>=1.5,<2" "numpy>=1.22" "pandas>=1.5" \
    "matplotlib>=3.5" "pyarrow>=12" "pytest>=7" "hypothesis>=6" "ruff>=0.4" "mypy>=1.10" \
    "dask[distributed]>=2023.1" "topohub>=1.5" "selenium>=4.11"
  touch "$stamp"
fi

PROFILE=${PATHPOOL_PROFILE:-release}
echo "bootstrap: building pathpool ($PROFILE)"
# The `pathpool` command is the Rust binary: maturin installs it from the wheel's data
# directory (pyproject.toml's tool.maturin.data, decision D225), so it is built first.
# `make test` builds with the fast-test profile, whose libraries its Rust tests reuse (D229).
PATHPOOL_PROFILE=$PROFILE scripts/wheel.sh --data-only
VIRTUAL_ENV="$PWD/$VENV" "$VENV/bin/maturin" develop --profile "$PROFILE" --quiet 2>&1 |
  grep -v -E '^(📦|✏️|🛠|🔗|🐍)' || true
"$VENV/bin/python" -c 'import pathpool' # fails loudly if the build did not install
