"""Gymnasium spaces for one seat of a ``VecEnv``."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from .env import VecEnv

#: Largest value an army cell or total can reach (the engine caps the
#: whole board's army at 10^9).
ARMY_MAX = 1_000_000_000


def observation_space(env: VecEnv) -> spaces.Dict:
    """The space of one seat's observation: the arrays of ``env.observations``
    without the leading ``(num_envs, seats)``."""
    side, seats = env.side, env.seats
    parts = {
        "tile": spaces.Box(0, 5, (side, side), np.uint8),
        "owner": spaces.Box(0, 2 + seats, (side, side), np.uint8),
        "army": spaces.Box(0, ARMY_MAX, (side, side), np.int32),
        "header": spaces.Box(0, 2**62, (1 + 2 * seats,), np.int64),
    }
    if "reference" in env.observations:
        channels = len(env.reference_channels)
        parts["reference"] = spaces.Box(0.0, np.float32(2**31), (channels, side, side), np.float32)
    if "mask" in env.observations:
        parts["mask"] = spaces.Box(0, 1, (side, side, env.actions_per_cell), np.bool_)
    if "memory" in env.observations:
        big = np.float32(2**31)
        parts["memory"] = spaces.Box(-1.0, big, env.observations["memory"].shape[2:], np.float32)
        parts["history"] = spaces.Box(0.0, big, env.observations["history"].shape[2:], np.float32)
        parts["totals"] = spaces.Box(0.0, big, env.observations["totals"].shape[2:], np.float32)
    return spaces.Dict(parts)


def action_space(env: VecEnv, action_format: str) -> spaces.Space:
    """``"flat"``: one index into the ``side × side × A`` head; ``"fields"``:
    the five integers ``[pass, row, col, dir, split]``."""
    if action_format == "flat":
        return spaces.Discrete(env.head_size)
    if action_format == "fields":
        return spaces.MultiDiscrete([3, env.side, env.side, 4, 2])
    raise ValueError(f"action_format must be 'flat' or 'fields', not {action_format!r}")
