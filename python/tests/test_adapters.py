"""The Gymnasium and PettingZoo adapters, through those libraries' own
checkers, and the Python opponent hook."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import parallel_api_test

from arena_rl.gym import GeneralsEnv, GeneralsVectorEnv
from arena_rl.pettingzoo import GeneralsParallelEnv


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(game="generals"),
        dict(game="generals", observation="both", action_format="fields"),
        dict(game="generals-classic", opponent="random"),
        dict(game="generals-classic", mode="2v2", seat=2),
        dict(game="generals-classic", mode="ffa", seats=3, max_turns=50),
    ],
    ids=["generals", "generals-both-fields", "classic-random", "classic-2v2", "classic-ffa3"],
)
def test_gymnasium_env_passes_the_checker(kwargs):
    env = GeneralsEnv(**kwargs)
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    again, _ = env.reset(seed=3)
    assert all(np.array_equal(obs[k], again[k]) for k in obs), "a seed names one board"


def test_gymnasium_env_plays_to_the_end_against_a_python_opponent():
    calls = []

    def opponent(obs, seat):
        calls.append(seat)
        legal = np.flatnonzero(obs["mask"])
        return int(legal[-1])

    env = GeneralsEnv("generals-classic", opponent=opponent, max_turns=30, render_mode="ansi")
    obs, info = env.reset(seed=1)
    assert set(obs) >= {"tile", "owner", "army", "header", "mask"}
    total, done, steps = 0.0, False, 0
    while not done:
        legal = np.flatnonzero(obs["mask"])
        obs, reward, terminated, truncated, info = env.step(int(legal[0]))
        total += reward
        done = terminated or truncated
        steps += 1
    assert steps == 30 and info["reason"] in ("turn_cap_draw", "general_captured")
    assert calls and set(calls) == {1}
    assert env.render().startswith("30 ")


def test_vector_env_steps_with_next_step_autoreset():
    env = GeneralsVectorEnv(4, "generals-classic", opponent="random", num_threads=2, max_turns=3)
    obs, info = env.reset(seed=5)
    assert env.observation_space.contains(obs)
    actions = np.zeros(4, dtype=np.int64)
    seeds = info["board_seed"].copy()
    for _ in range(3):
        obs, reward, terminated, truncated, info = env.step(actions)
    assert terminated.all() and reward.shape == (4,)
    obs, reward, terminated, truncated, info = env.step(actions)
    assert not terminated.any() and (info["turn"] == 0).all() and (info["board_seed"] != seeds).all()
    assert env.single_action_space.n == 23 * 23 * 9


@pytest.mark.parametrize(
    "kwargs",
    [dict(game="generals"), dict(game="generals-classic", mode="2v2"), dict(game="generals-classic", mode="ffa", seats=3)],
    ids=["generals", "classic-2v2", "classic-ffa3"],
)
def test_pettingzoo_parallel_env_passes_the_api_test(kwargs):
    env = GeneralsParallelEnv(**kwargs)
    parallel_api_test(env, num_cycles=200)
    observations, infos = env.reset(seed=2)
    assert set(observations) == set(env.possible_agents)


def test_pettingzoo_episode_ends_for_every_agent_at_once():
    env = GeneralsParallelEnv("generals-classic", mode="ffa", seats=4, max_turns=10)
    observations, _ = env.reset(seed=4)
    for turn in range(10):
        actions = {agent: 0 for agent in env.agents}
        observations, rewards, terminations, truncations, infos = env.step(actions)
    assert all(terminations.values()) and env.agents == []
    assert sorted(infos) == sorted(env.possible_agents)
    assert all(info["reason"] == "turn_limit" for info in infos.values())
