"""Train where you are judged, proven on one graph: the shipped greedy
generals model plays a real, sandboxed match through `arena play` (the
model host evaluates it with tract from the referee's frames); the same
ONNX graph, evaluated here with onnx's own reference evaluator on the
observations `arena_rl` writes for that seat (compact planes, memory,
history, totals), with the legal mask `arena_rl` writes, chooses the same
action on every turn."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from onnx import reference as onnx_reference

from arena_rl import VecEnv
from arena_rl.env import decode_flat
from conftest import REPO



def model_inputs(obs: dict, seat: int, history_turns: int) -> dict:
    """The greedy graph's inputs for `seat` of environment 0, built from the
    arrays alone, as a training loop would feed them."""
    compact = np.stack([obs["tile"][0, seat], obs["owner"][0, seat], obs["army"][0, seat]]).astype(np.float32)
    return {
        "compact": compact[None],
        "memory": obs["memory"][0, seat][None],
        "history": obs["history"][0, seat, -history_turns:][None],
        "totals": obs["totals"][0, seat][None],
    }


def best_legal(scores: np.ndarray, mask: np.ndarray) -> int:
    """The highest-scoring legal entry, the lowest index on a tie (the
    platform's rule, docs/games/generals-models.md)."""
    flat = scores.reshape(-1)
    legal = np.where(mask.reshape(-1), flat, -np.inf)
    return int(np.argmax(legal))


@pytest.mark.parametrize("game, bot, seed, side", [("generals", "greedy", 7, 21), ("generals-classic", "greedy-classic", 11, 23)])
def test_a_match_plays_what_the_graph_chooses_on_arena_rl_observations(arena: str, tmp_path: Path, game, bot, seed, side):
    model_dir = REPO / "bots" / "generals-models" / bot
    replay_path = tmp_path / "replay.json"
    run = subprocess.run(
        [
            arena, "play", "--game", game, "--seed", str(seed), "--json",
            str(model_dir), str(REPO / "bots" / "starter-python"),
            "--cache-dir", str(tmp_path / "cache"), "--replay", str(replay_path),
            "--logs", str(tmp_path / "logs"),
        ] + (["--rules", "max_turns=200"] if game == "generals-classic" else []),
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    model_seat = result["players"][0]
    assert model_seat["forfeit"] is None and model_seat["faults"]["strike"] == 0, model_seat
    replay = json.loads(replay_path.read_text())

    evaluator = onnx_reference.ReferenceEvaluator(str(model_dir / "model.onnx"))
    env = VecEnv(game, 1, memory=True, masks=True, record=False, side=side)
    env.reset(seed=0)
    env.load_state(0, json.dumps(replay["initial"]))
    obs = env.observations
    actions = np.zeros((1, 2, 5), dtype=np.int64)
    compared = 0
    for turn, step in enumerate(replay["turns"]):
        played = step["actions"][0]
        scores = evaluator.run(None, model_inputs(obs, 0, 8))[0]
        assert scores.shape == (side * side, env.actions_per_cell)
        chosen = decode_flat(best_legal(scores, obs["mask"][0, 0]), side=side, builds=env.builds)
        assert list(chosen) == played, f"turn {turn}: arena_rl's observation gives {chosen}, the match played {played}"
        compared += 1
        for seat in range(2):
            actions[0, seat] = step["actions"][seat] if step["actions"][seat] is not None else [1, 0, 0, 0, 0]
        _, _, terminated, _, _ = env.step(actions)
        if terminated[0]:
            break
    assert compared == len(replay["turns"]) and compared > 50, compared
