"""The dev key is written whole, once, and readable by its owner only."""

from __future__ import annotations

import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from memory_service.config import dev_secret


def test_concurrent_first_starts_agree_on_one_private_dev_key(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with ThreadPoolExecutor(8) as pool:
        keys = set(pool.map(lambda _: dev_secret(data), range(16)))
    assert len(keys) == 1
    assert stat.S_IMODE((data / "dev-jwt-secret").stat().st_mode) == 0o600
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert [p.name for p in data.iterdir()] == ["dev-jwt-secret"]
