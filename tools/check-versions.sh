#!/usr/bin/env bash
# Checks, before anything is downloaded or built, that this machine has what building ccfair needs:
# Python >= 3.11 (as $1) and Rust >= 1.85 (cargo and rustc; the crates use edition 2024). A virtualenv
# ($2) made by an older Python is removed, with a note, so that the next step makes it anew.
set -u
python=${1:-python3}
venv=${2:-.venv}
min_py=3.11
min_rust=1.85
fail=0

py_version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
if [ -z "$py_version" ]; then
  echo "error: $python not found: ccfair needs Python >= $min_py (Debian/Ubuntu: apt-get install python3;"
  echo "       or pyenv); give another one with: make PYTHON=/path/to/python3.11 ..."
  fail=1
elif ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "error: $python is Python $py_version; ccfair needs Python >= $min_py. Install one (Debian 12, Ubuntu"
  echo "       24.04 and Fedora ship it; otherwise pyenv or your distribution's python3.11 package) and run"
  echo "       make PYTHON=python3.11 ..."
  fail=1
elif ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
  echo "error: $python cannot make virtualenvs (Debian/Ubuntu: apt-get install python3-venv)"
  fail=1
fi

# ge A B: version A >= version B (major.minor)
ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }

if ! command -v cargo >/dev/null 2>&1 || ! command -v rustc >/dev/null 2>&1; then
  echo "error: cargo and rustc not found: ccfair needs Rust >= $min_rust (edition 2024). Install it from"
  echo "       https://rustup.rs (curl --proto '=https' -sSf https://sh.rustup.rs | sh), then open a new shell"
  fail=1
else
  rust_version=$(rustc --version | awk '{print $2}')
  if ! ge "${rust_version%%-*}" "$min_rust"; then
    echo "error: rustc is $rust_version; ccfair needs Rust >= $min_rust (the crates use edition 2024):"
    echo "       rustup update stable"
    fail=1
  fi
fi
[ "$fail" = 0 ] || exit 1

if [ -f "$venv/pyvenv.cfg" ] && [ -x "$venv/bin/python" ] \
  && ! "$venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  old=$("$venv/bin/python" --version 2>&1)
  echo "note: $venv was made by ${old:-an unusable Python}; making it anew with Python $py_version"
  rm -rf "$venv"
fi
exit 0
