import pytest


@pytest.fixture(params=["sync", "async"])
def shell_kind(request: pytest.FixtureRequest) -> str:
    """Every flow test runs through the blocking and the asyncio shell."""
    return str(request.param)
