"""A PettingZoo ``ParallelEnv``: every seat of one board is an agent
(``seat_0``, ``seat_1``, ...). All agents act every turn; a seat whose
general fell keeps observing (its view is all fog) and its actions are
ignored until the game ends, when every agent terminates together."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from .env import Observation, VecEnv
from .spaces import action_space, observation_space


class GeneralsParallelEnv(ParallelEnv):
    """Every seat of one generals board; ``observation``, ``masks``,
    ``action_format`` and the game's options as for ``GeneralsEnv``."""

    metadata = {"name": "arena_generals_v0", "render_modes": ["ansi"], "is_parallelizable": True}

    def __init__(
        self,
        game: str = "generals",
        *,
        observation: str = "compact",
        masks: bool = True,
        action_format: str = "flat",
        render_mode: Optional[str] = None,
        **kwargs: Any,
    ) -> None:
        self._env = VecEnv(game, 1, observation=observation, masks=masks, record=False, **kwargs)
        self.possible_agents = [f"seat_{s}" for s in range(self._env.seats)]
        self.agents: list = []
        self.render_mode = render_mode
        self.action_format = action_format
        self._observation_space = observation_space(self._env)
        self._action_space = action_space(self._env, action_format)
        shape = (1, self._env.seats) + ((5,) if action_format == "fields" else ())
        self._actions = np.zeros(shape, dtype=np.int64)
        self._rng = np.random.default_rng()

    @property
    def vec_env(self) -> VecEnv:
        return self._env

    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_space

    def _observations(self) -> Dict[str, Observation]:
        return {a: self._env.seat_view(0, s) for s, a in enumerate(self.possible_agents) if a in self.agents}

    def reset(self, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None) -> Tuple[Dict[str, Observation], Dict[str, Dict[str, Any]]]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._env.reset(seed=int(self._rng.integers(0, 2**63 - 1)))
        self.agents = list(self.possible_agents)
        return self._observations(), {a: {} for a in self.agents}

    def step(self, actions: Dict[str, Any]):
        self._actions[...] = 0
        if self.action_format == "fields":
            self._actions[..., 0] = 1
        for seat, agent in enumerate(self.possible_agents):
            if agent in actions:
                if self.action_format == "flat":
                    self._actions[0, seat] = int(actions[agent])
                else:
                    self._actions[0, seat] = np.asarray(actions[agent], dtype=np.int64)
        _, reward, terminated, truncated, info = self._env.step(self._actions)
        observations = self._observations()
        done = bool(terminated[0])
        rewards = {a: float(reward[0, s]) for s, a in enumerate(self.possible_agents) if a in self.agents}
        terminations = {a: done for a in self.agents}
        truncations = {a: bool(truncated[0]) for a in self.agents}
        infos: Dict[str, Dict[str, Any]] = {a: {} for a in self.agents}
        if done:
            for s, a in enumerate(self.possible_agents):
                if a in infos:
                    infos[a] = {"rank": int(info["ranks"][0, s]), "reason": info["reason"][0]}
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def render(self) -> Optional[str]:
        if self.render_mode == "ansi":
            return self._env.state(0)
        return None

    def close(self) -> None:
        pass
