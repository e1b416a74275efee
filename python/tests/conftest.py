"""Shared helpers: the repository's paths, the `arena` binary, and a
reader of the referee's text frames written independently of the engine."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import List, Optional, Tuple

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"


def arena_binary() -> Optional[str]:
    """The `arena` command: $ARENA_BIN, else the workspace's newest build."""
    given = os.environ.get("ARENA_BIN")
    if given:
        return given
    builds = [REPO / "target" / p / "arena" for p in ("debug", "release")]
    found = [b for b in builds if b.exists()]
    if found:
        return str(max(found, key=lambda b: b.stat().st_mtime))
    return shutil.which("arena")


@pytest.fixture(scope="session")
def arena() -> str:
    binary = arena_binary()
    if binary is None:
        pytest.fail("no arena binary: build it (cargo build -p arena-cli) or set ARENA_BIN")
    return binary


def parse_frame(text: str, seats: int, side: int) -> Tuple[List[int], np.ndarray, np.ndarray, np.ndarray]:
    """The header and the tile, owner and army grids of a frame, padded to
    `side` with mountains the way docs/rl.md describes: seen (2) next to a
    cell of the seat's (or, with more than two seats, its teammates': owner
    code 2), a structure in fog (5) elsewhere."""
    lines = text.strip("\n").split("\n")
    header = [int(v) for v in lines[0].split()]
    rows = [[int(v) for v in line.split()] for line in lines[1:]]
    h = len(rows) // 3
    w = len(rows[0])
    grids = [np.array(rows[g * h:(g + 1) * h], dtype=np.int64) for g in range(3)]
    tile = np.full((side, side), -1, dtype=np.int64)
    owner = np.zeros((side, side), dtype=np.int64)
    army = np.zeros((side, side), dtype=np.int64)
    tile[:h, :w], owner[:h, :w], army[:h, :w] = grids
    team = grids[1] == 1
    if seats > 2:
        team |= grids[1] == 2
    seen = np.zeros((side + 2, side + 2), dtype=bool)
    for r, c in zip(*np.nonzero(team)):
        seen[r:r + 3, c:c + 3] = True
    seen = seen[1:-1, 1:-1]
    pad = tile == -1
    tile[pad & seen] = 2
    tile[pad & ~seen] = 5
    return header, tile, owner, army
