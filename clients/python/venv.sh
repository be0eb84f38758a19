#!/usr/bin/env bash
# Creates clients/python/.venv, or reuses it while requirements-dev.txt and pyproject.toml are unchanged, with
# the pinned test tools and this package installed editable. Used by `npm run test:python` and by the
# conformance suite, so either works on a fresh clone. PYTHON picks the interpreter (default python3, >= 3.10).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv"
python="${PYTHON:-python3}"
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' || {
  echo "clients/python needs Python >= 3.10; $python is $("$python" --version 2>&1)" >&2
  exit 1
}
wanted="$(cat "$here/requirements-dev.txt" "$here/pyproject.toml" | sha256sum | cut -d' ' -f1)"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
if [ "$(cat "$venv/.installed" 2>/dev/null || true)" != "$wanted" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements-dev.txt" -e "$here"
  echo "$wanted" >"$venv/.installed"
fi
