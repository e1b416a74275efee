"""The scripted opponent against the Python starter bot
(bots/starter-python), played through VecEnv: the starter reads the
referee's text frames exactly as it does in a match."""

from __future__ import annotations

import importlib.util

import numpy as np

from arena_rl import VecEnv
from conftest import REPO


def starter_module():
    spec = importlib.util.spec_from_file_location("starter_bot", REPO / "bots" / "starter-python" / "bot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def play(starter, game: str, seed: int, scripted_seat: int, **options) -> float:
    """One game; the scripted seat's points (1 win, 0.5 draw, 0 loss)."""
    env = VecEnv(game, 1, seed=seed, opponents={scripted_seat: "scripted"}, record=False, **options)
    obs, _ = env.reset()
    seat = 1 - scripted_seat
    player_id, h, w = (int(v) for v in env.handshake(0, seat).split())
    bot = starter.Bot(player_id, h, w)
    actions = np.zeros((1, 2, 5), dtype=np.int64)
    actions[..., 0] = 1
    while True:
        lines = env.frame(0, seat).strip("\n").split("\n")
        header = [int(v) for v in lines[0].split()]
        rows = [[int(v) for v in line.split()] for line in lines[1:]]
        reply = bot.choose(starter.Frame(header, rows, h))
        actions[0, seat] = [int(v) for v in reply.split()]
        _, reward, terminated, _, _ = env.step(actions)
        if terminated[0]:
            return (float(reward[0, scripted_seat]) + 1) / 2


def test_scripted_opponent_is_at_least_as_strong_as_the_starter():
    starter = starter_module()
    games = [("generals", seed, seed % 2) for seed in range(4)]
    games += [("generals-classic", 100 + seed, seed % 2) for seed in range(4)]
    points = [play(starter, game, seed, seat) for game, seed, seat in games]
    assert sum(points) >= len(points) / 2, points
