#!/usr/bin/env bash
# The Python client's checks and unit tests, as `npm run test:python` (and so `npm test`) runs them: the
# virtual environment (venv.sh), ruff (lint and format), mypy --strict, then pytest. Pure: no cluster; the
# conformance suite (test/integration/conformance) drives this client against one.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/venv.sh"
cd "$here"
checked=(. ../../test/conformance/drivers ../../examples/agent-host-python)
.venv/bin/ruff check "${checked[@]}"
.venv/bin/ruff format --check "${checked[@]}"
.venv/bin/mypy
status=0
.venv/bin/python -m pytest "$@" || status=$?
# pytest's 5 is "no tests collected": a test step that ran nothing has failed.
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests in clients/python/tests" >&2
  exit 1
fi
exit "$status"
