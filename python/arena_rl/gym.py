"""Gymnasium adapters: one seat as an ``Env``, and many boards of one seat
as a ``VectorEnv`` (next-step auto-reset). The other seats are played by
a built-in player (``"scripted"`` or ``"random"``) or, for ``GeneralsEnv``,
by a Python callable."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple, Union

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .env import Observation, VecEnv
from .spaces import action_space, observation_space

#: A Python opponent: given its seat's observation (a dict of copied
#: arrays) and its seat, returns an action in the environment's format.
Policy = Callable[[Observation, int], Any]


def _native_seed(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2**63 - 1))


def _seats(game: str, kwargs: Dict[str, Any]) -> int:
    """The seat count a configuration plays (its options checked on the way)."""
    return VecEnv(game, 1, record=False, **kwargs).seats


def _fill(actions: np.ndarray, seat: int, action: Any, action_format: str) -> None:
    if action_format == "flat":
        actions[..., seat] = np.asarray(action, dtype=np.int64)
    else:
        actions[..., seat, :] = np.asarray(action, dtype=np.int64)


class GeneralsEnv(gym.Env):
    """One seat of a generals game against built-in or Python opponents.

    Parameters: ``game``, ``seat`` (the agent's), ``opponent``
    (``"scripted"``, ``"random"`` or a callable ``policy(obs, seat)``),
    ``observation`` and ``masks`` as for ``VecEnv``, ``action_format``
    (``"flat"`` or ``"fields"``), ``render_mode`` (``"ansi"``: the agent's
    text frame), and the game's options. Observations are copies.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        game: str = "generals",
        *,
        seat: int = 0,
        opponent: Union[str, Policy] = "scripted",
        observation: str = "compact",
        masks: bool = True,
        action_format: str = "flat",
        render_mode: Optional[str] = None,
        **kwargs: Any,
    ) -> None:
        self._policy: Optional[Policy] = None if isinstance(opponent, str) else opponent
        opponents = None
        if isinstance(opponent, str):
            seats = _seats(game, kwargs)
            opponents = {s: opponent for s in range(seats) if s != seat}
        self._env = VecEnv(
            game, 1, observation=observation, masks=masks, record=False, opponents=opponents, **kwargs
        )
        if not 0 <= seat < self._env.seats:
            raise ValueError(f"seat {seat} does not exist: the game has {self._env.seats} seats")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.seat = seat
        self.render_mode = render_mode
        self.action_format = action_format
        self.observation_space = observation_space(self._env)
        self.action_space = action_space(self._env, action_format)
        shape = (1, self._env.seats) + ((5,) if action_format == "fields" else ())
        self._actions = np.zeros(shape, dtype=np.int64)
        if action_format == "fields":
            self._actions[..., 0] = 1  # passes

    @property
    def vec_env(self) -> VecEnv:
        """The underlying one-board ``VecEnv`` (replays, frames, state)."""
        return self._env

    def _info(self) -> Dict[str, Any]:
        info = self._env._info
        h, w = info["board_size"][0]
        return {
            "winner": int(info["winner"][0]),
            "ranks": info["ranks"][0].tolist(),
            "reason": info["reason"][0],
            "turn": int(info["turn"][0]),
            "board_seed": int(info["board_seed"][0]),
            "board_size": (int(h), int(w)),
        }

    def reset(self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None) -> Tuple[Observation, Dict[str, Any]]:
        super().reset(seed=seed)
        self._env.reset(seed=_native_seed(self.np_random))
        return self._env.seat_view(0, self.seat), self._info()

    def step(self, action: Any) -> Tuple[Observation, float, bool, bool, Dict[str, Any]]:
        _fill(self._actions[0], self.seat, action, self.action_format)
        if self._policy is not None:
            for other in range(self._env.seats):
                if other != self.seat:
                    move = self._policy(self._env.seat_view(0, other), other)
                    _fill(self._actions[0], other, move, self.action_format)
        _, reward, terminated, truncated, _ = self._env.step(self._actions)
        return (
            self._env.seat_view(0, self.seat),
            float(reward[0, self.seat]),
            bool(terminated[0]),
            bool(truncated[0]),
            self._info(),
        )

    def render(self) -> Optional[str]:
        if self.render_mode == "ansi":
            return self._env.frame(0, self.seat)
        return None


class GeneralsVectorEnv(VectorEnv):
    """``num_envs`` boards, the agent in ``seat`` of each, the other seats
    played by a built-in player (``"scripted"`` or ``"random"``). Uses
    Gymnasium's next-step auto-reset. Observations and rewards are views
    into the environment's arrays, valid until the next call."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        num_envs: int,
        game: str = "generals",
        *,
        seat: int = 0,
        opponent: str = "scripted",
        num_threads: int = 1,
        observation: str = "compact",
        masks: bool = True,
        action_format: str = "flat",
        **kwargs: Any,
    ) -> None:
        seats = _seats(game, kwargs)
        if not 0 <= seat < seats:
            raise ValueError(f"seat {seat} does not exist: the game has {seats} seats")
        opponents = {s: opponent for s in range(seats) if s != seat}
        self._env = VecEnv(
            game,
            num_envs,
            num_threads=num_threads,
            observation=observation,
            masks=masks,
            opponents=opponents,
            **kwargs,
        )
        self.seat = seat
        self.num_envs = num_envs
        self.action_format = action_format
        self.single_observation_space = observation_space(self._env)
        self.single_action_space = action_space(self._env, action_format)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        shape = (num_envs, self._env.seats) + ((5,) if action_format == "fields" else ())
        self._actions = np.zeros(shape, dtype=np.int64)
        if action_format == "fields":
            self._actions[..., 0] = 1
        self._np_random: Optional[np.random.Generator] = None

    @property
    def vec_env(self) -> VecEnv:
        return self._env

    def _obs(self) -> Observation:
        return {name: array[:, self.seat] for name, array in self._env.observations.items()}

    def reset(self, *, seed: Optional[Union[int, list]] = None, options: Optional[Dict[str, Any]] = None) -> Tuple[Observation, Dict[str, Any]]:
        if isinstance(seed, list):
            seed = seed[0] if seed else None
        if seed is not None or self._np_random is None:
            self._np_random = np.random.default_rng(seed)
        self._env.reset(seed=_native_seed(self._np_random))
        return self._obs(), dict(self._env._info)

    def step(self, actions: Any) -> Tuple[Observation, np.ndarray, np.ndarray, np.ndarray, Dict[str, Any]]:
        _fill(self._actions, self.seat, actions, self.action_format)
        _, reward, terminated, truncated, info = self._env.step(self._actions)
        return self._obs(), reward[:, self.seat], terminated, truncated, dict(info)
