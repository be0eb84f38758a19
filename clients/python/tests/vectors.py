"""The shared vectors (test/conformance/vectors in the repository): the TypeScript client's unit tests read
the same files. SANDBOX_OPERATOR_VECTORS names another directory (e.g. outside a checkout)."""

import json
import os
from pathlib import Path
from typing import Any

DIRECTORY = Path(
    os.environ.get(
        "SANDBOX_OPERATOR_VECTORS", Path(__file__).resolve().parents[3] / "test" / "conformance" / "vectors"
    )
)


def load(name: str) -> Any:
    with (DIRECTORY / name).open(encoding="utf-8") as file:
        return json.load(file)


def cases(name: str) -> list[Any]:
    return list(load(name)["cases"])
