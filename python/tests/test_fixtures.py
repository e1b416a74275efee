"""The golden games recorded from the reference engine, played through
VecEnv: every turn's totals, the whole board at every sampled frame, each
sampled frame against the observation, and the result."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from arena_rl import VecEnv
from conftest import SHARED, parse_frame

KINDS = ["Plain", "Mountain", "Castle", "General"]


def fixtures(ruleset: str):
    folder = SHARED / "fixtures" / ruleset
    files = sorted(folder.glob("game-*.json.gz"))
    if len(files) < 40:
        pytest.fail(f"expected the 40 golden games in {folder}, found {len(files)}")
    return files


def engine_state(fx: dict) -> str:
    """The fixture's initial board in the engine's state JSON."""
    h, w = fx["height"], fx["width"]
    init = fx["initial"]
    classic = fx["ruleset"] == "classic"
    state = {
        "height": h,
        "width": w,
        "params": {
            "max_turns": fx["max_turns"],
            "deathtouch_turn": fx["max_turns"] if classic else fx["deathtouch_turn"],
            "build_base_cost": 35,
        },
        "kind": [KINDS[k] for row in init["kind"] for k in row],
        "owner": [o for row in init["owner"] for o in row],
        "army": [a for row in init["army"] for a in row],
        "generals": [r * w + c for r, c in init["generals"]],
        "time": 0,
        "outcome": None,
    }
    if classic:
        state["ruleset"] = "classic"
    return json.dumps(state)


def play(path: Path, env: VecEnv) -> int:
    fx = json.loads(gzip.open(path).read())
    h, w = fx["height"], fx["width"]
    env.load_state(0, engine_state(fx))
    board = {
        "kind": np.array(fx["initial"]["kind"]),
        "owner": np.array(fx["initial"]["owner"]),
        "army": np.array(fx["initial"]["army"]),
    }
    frames = fx["observations"]
    obs = env.observations
    checked = 0
    for turn in fx["turns"]:
        t = turn["t"]
        if str(t) in frames:
            for seat in range(2):
                header, tile, owner, army = parse_frame(frames[str(t)][seat], 2, env.side)
                where = f"{path.name} turn {t} seat {seat}"
                assert obs["header"][0, seat].tolist() == header, where
                assert np.array_equal(obs["tile"][0, seat], tile), where
                assert np.array_equal(obs["owner"][0, seat], owner), where
                assert np.array_equal(obs["army"][0, seat], army), where
            state = json.loads(env.state(0))
            assert state["army"] == board["army"].ravel().tolist(), f"{path.name} turn {t}"
            assert state["owner"] == board["owner"].ravel().tolist(), f"{path.name} turn {t}"
            assert state["kind"] == [KINDS[k] for k in board["kind"].ravel()], f"{path.name} turn {t}"
            checked += 1
        _, _, term, _, info = env.step(np.array([turn["actions"]], dtype=np.int64))
        for r, c, kind, owner, army in turn["changes"]:
            board["kind"][r, c], board["owner"][r, c], board["army"][r, c] = kind, owner, army
        totals = [[int(obs["header"][0, s, 1]), int(obs["header"][0, s, 2])] for s in range(2)]
        assert totals == turn["totals"], f"{path.name} after turn {t}"
        last = turn is fx["turns"][-1]
        assert bool(term[0]) == last, f"{path.name} turn {t}: ended {bool(term[0])}"
    result = fx["result"]
    winner = -1 if result["winner"] is None else result["winner"]
    assert int(info["winner"][0]) == winner, path.name
    assert info["reason"][0] == result["reason"], path.name
    assert int(info["turn"][0]) == result["final_t"], path.name
    assert (h, w) == tuple(info["board_size"][0])
    return checked


@pytest.mark.parametrize("ruleset,game", [("generals", "generals"), ("generals-classic", "generals-classic")])
def test_golden_games_replay_exactly_through_vec_env(ruleset, game):
    env = VecEnv(game, 1)
    frames = sum(play(path, env) for path in fixtures(ruleset))
    assert frames > 40
