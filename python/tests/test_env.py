"""VecEnv: shapes, the observation against the referee's frames, seeds and
threads, auto-reset, rewards, replays, bad input."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from arena_rl import VecEnv, decode_flat, encode_flat
from conftest import parse_frame

FORMATS = [
    dict(game="generals"),
    dict(game="generals-classic"),
    dict(game="generals-classic", mode="2v2"),
    dict(game="generals-classic", mode="ffa", seats=3),
]


def random_legal(env: VecEnv, rng: np.random.Generator) -> np.ndarray:
    """A random legal flat action per board and seat, from the masks."""
    mask = env.observations["mask"].reshape(env.num_envs, env.seats, -1)
    out = np.zeros((env.num_envs, env.seats), dtype=np.int64)
    for e in range(env.num_envs):
        for s in range(env.seats):
            legal = np.flatnonzero(mask[e, s])
            moves = legal[legal % env.actions_per_cell != 0]
            pick = moves if len(moves) and rng.random() < 0.9 else legal
            out[e, s] = rng.choice(pick)
    return out


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: "-".join(str(v) for v in f.values()))
def test_observations_are_the_referees_frames(fmt):
    env = VecEnv(num_envs=3, seed=11, masks=True, num_threads=2, **fmt)
    obs, _ = env.reset()
    rng = np.random.default_rng(1)
    side = env.side
    for step in range(120):
        for e in range(env.num_envs):
            for s in range(env.seats):
                header, tile, owner, army = parse_frame(env.frame(e, s), env.seats, side)
                where = f"step {step} board {e} seat {s}"
                assert obs["header"][e, s].tolist() == header, where
                assert np.array_equal(obs["tile"][e, s], tile), where
                assert np.array_equal(obs["owner"][e, s], owner), where
                assert np.array_equal(obs["army"][e, s], army), where
        obs, *_ = env.step(random_legal(env, rng))


def test_shapes_dtypes_and_read_only_arrays():
    env = VecEnv("generals-classic", 4, mode="2v2", observation="both", masks=True)
    obs, info = env.reset(seed=3)
    assert env.seats == 4 and env.side == 23 and env.actions_per_cell == 9
    assert obs["tile"].shape == (4, 4, 23, 23) and obs["tile"].dtype == np.uint8
    assert obs["army"].dtype == np.int32
    assert obs["header"].shape == (4, 4, 9) and obs["header"].dtype == np.int64
    assert obs["reference"].shape == (4, 4, 17, 23, 23) and obs["reference"].dtype == np.float32
    assert obs["mask"].shape == (4, 4, 23, 23, 9) and obs["mask"].dtype == np.bool_
    assert env.reference_channels[6] == "allied_cells"
    with pytest.raises(ValueError):
        obs["army"][0, 0, 0, 0] = 5
    duel = VecEnv("generals", 2)
    assert duel.side == 21 and duel.actions_per_cell == 10 and duel.seats == 2
    assert duel.reset()[0]["header"].shape == (2, 2, 5)
    again = env.step(np.zeros((4, 4), dtype=np.int64))[0]
    assert again["tile"] is obs["tile"], "the same arrays every step"


def test_reference_layout_is_a_function_of_the_compact_planes():
    for fmt in FORMATS:
        env = VecEnv(num_envs=2, seed=5, observation="both", masks=True, **fmt)
        obs, _ = env.reset()
        rng = np.random.default_rng(2)
        for _ in range(60):
            obs, *_ = env.step(random_legal(env, rng))
        ch = {name: i for i, name in enumerate(env.reference_channels)}
        ref, tile, owner = obs["reference"], obs["tile"], obs["owner"]
        assert np.array_equal(ref[:, :, ch["armies"]], obs["army"])
        assert np.array_equal(ref[:, :, ch["generals"]], tile == 4)
        assert np.array_equal(ref[:, :, ch["castles"]], tile == 3)
        assert np.array_equal(ref[:, :, ch["mountains"]], tile == 2)
        assert np.array_equal(ref[:, :, ch["owned_cells"]], owner == 1)
        assert np.array_equal(ref[:, :, ch["fog_cells"]], tile == 0)
        assert np.array_equal(ref[:, :, ch["structures_in_fog"]], tile == 5)
        assert np.array_equal(ref[:, :, ch["neutral_cells"]], (owner == 0) & np.isin(tile, [1, 3, 4]))
        turn = obs["header"][:, :, 0]
        assert np.array_equal(ref[:, :, ch["timestep"]], np.broadcast_to(turn[:, :, None, None], ref.shape[:2] + ref.shape[3:]))
        mine = obs["header"][:, :, 1] if env.seats == 2 and "allied_cells" not in ch else None
        if mine is not None:
            assert np.array_equal(ref[:, :, ch["owned_land_count"], 0, 0], mine)
            assert np.array_equal(ref[:, :, ch["opponent_cells"]], owner == 2)
        else:
            assert np.array_equal(ref[:, :, ch["allied_cells"]], owner == 2)
            assert np.array_equal(ref[:, :, ch["opponent_cells"]], owner >= 3)


def test_results_do_not_depend_on_threads_and_seeds_repeat():
    def run(threads: int, seed: int):
        env = VecEnv("generals", 5, seed=seed, num_threads=threads, masks=True)
        obs, _ = env.reset()
        rng = np.random.default_rng(9)
        digest = []
        for _ in range(80):
            obs, reward, term, trunc, info = env.step(random_legal(env, rng))
            digest.append((obs["army"].sum(), obs["tile"].tobytes().__hash__(), info["board_seed"].tolist()))
        return digest
    one = run(1, 42)
    assert run(2, 42) == one
    assert run(3, 42) == one
    assert run(1, 43) != one


def test_turn_cap_ends_the_episode_and_the_next_step_restarts():
    env = VecEnv("generals-classic", 2, seed=1, max_turns=5)
    obs, info = env.reset()
    first_seeds = info["board_seed"].copy()
    passes = np.zeros((2, 2), dtype=np.int64)
    for t in range(1, 6):
        obs, reward, term, trunc, info = env.step(passes)
        assert info["turn"].tolist() == [t, t]
    assert term.all() and not trunc.any()
    assert reward.tolist() == [[0.0, 0.0], [0.0, 0.0]], "a draw is worth 0"
    assert list(info["reason"]) == ["turn_cap_draw", "turn_cap_draw"]
    assert info["ranks"].tolist() == [[0, 0], [0, 0]]
    obs, reward, term, trunc, info = env.step(passes)
    assert not term.any() and info["turn"].tolist() == [0, 0]
    assert (info["board_seed"] != first_seeds).all()
    assert list(info["reason"]) == ["", ""]


def test_scripted_beats_random_and_rewards_are_plus_minus_one(arena, tmp_path):
    env = VecEnv("generals-classic", 4, seed=7, opponents={0: "scripted", 1: "random"})
    env.reset()
    ignored = np.zeros((4, 2), dtype=np.int64)
    finished = {}
    for _ in range(501):
        _, reward, term, _, info = env.step(ignored)
        for e in np.flatnonzero(term):
            finished.setdefault(int(e), (reward[e].tolist(), int(info["winner"][e]), info["reason"][e]))
        if len(finished) == 4:
            break
    assert len(finished) == 4
    wins = sum(1 for r, w, _ in finished.values() if w == 0)
    assert wins >= 3, finished
    for rewards, winner, reason in finished.values():
        if winner >= 0:
            assert rewards[winner] == 1.0 and rewards[1 - winner] == -1.0 and reason == "general_captured"
    path = tmp_path / "scripted.json"
    env.save_replay(0, str(path))
    done = subprocess.run([arena, "replay", "verify", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: "-".join(str(v) for v in f.values()))
def test_every_episode_is_a_replay_arena_verifies(fmt, arena, tmp_path):
    env = VecEnv(num_envs=2, seed=21, masks=True, max_turns=60, **fmt) if fmt["game"] != "generals" else VecEnv(num_envs=2, seed=21, masks=True, **fmt)
    obs, _ = env.reset()
    rng = np.random.default_rng(4)
    sent = []
    ended = False
    for _ in range(1300):
        actions = random_legal(env, rng)
        sent.append(actions[0].copy())
        _, _, term, _, info = env.step(actions)
        if term[0]:
            ended = True
            break
    assert ended
    path = tmp_path / "episode.json"
    env.save_replay(0, str(path))
    replay = json.loads(path.read_text())
    assert replay["game"] == env.game and len(replay["turns"]) == len(sent)
    for turn, actions in zip(replay["turns"], sent):
        for seat, (recorded, flat) in enumerate(zip(turn["actions"], actions)):
            if recorded is not None:
                expected = list(decode_flat(flat, side=env.side, builds=env.builds))
                assert recorded == expected, (seat, recorded, expected)
    done = subprocess.run([arena, "replay", "verify", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    # The episode in progress is a replay too, not yet finished.
    env.step(random_legal(env, rng))
    env.step(random_legal(env, rng))
    unfinished = json.loads(env.replay(0, finished=False))
    assert unfinished["result"] is None and len(unfinished["turns"]) == 1


def test_flat_and_field_actions_agree():
    for builds, game in [(True, "generals"), (False, "generals-classic")]:
        side = 21 if builds else 23
        per_cell = 10 if builds else 9
        for index in [0, 1, 8, per_cell * 5 + 3, per_cell * (side * side) - 1]:
            fields = decode_flat(index, side=side, builds=builds)
            back = encode_flat(*fields, side=side, builds=builds)
            assert back == (0 if index % per_cell == 0 else index)
        a = VecEnv(game, 2, seed=8, masks=True)
        b = VecEnv(game, 2, seed=8)
        a.reset(), b.reset()
        rng = np.random.default_rng(5)
        for _ in range(50):
            flat = random_legal(a, rng)
            fields = np.array([[decode_flat(v, side=side, builds=builds) for v in row] for row in flat])
            oa = a.step(flat)[0]
            ob = b.step(fields)[0]
            assert np.array_equal(oa["army"], ob["army"]) and np.array_equal(oa["owner"], ob["owner"])


def test_bad_actions_are_refused_and_change_nothing():
    env = VecEnv("generals", 2, seed=1)
    obs, _ = env.reset()
    before = obs["army"].copy(), obs["header"].copy()
    bad = [
        (np.zeros((2, 3), dtype=np.int64), "shape"),
        (np.zeros((2, 2), dtype=np.float32), "integers"),
        (np.array([[0, 0], [0, 10**9]]), "outside"),
        (np.array([[0, 0], [-1, 0]]), "outside"),
        (np.array([[[3, 0, 0, 0, 0]] * 2] * 2), "pass must be"),
        (np.array([[[0, 0, 0, 9, 0]] * 2] * 2), "dir must be"),
    ]
    for actions, words in bad:
        with pytest.raises(ValueError, match=words):
            env.step(actions)
        assert np.array_equal(obs["army"], before[0]) and np.array_equal(obs["header"], before[1])
    # Off-board coordinates are well-formed actions: a silent pass, as in a match.
    env.step(np.array([[[0, -5, 99, 1, 1]] * 2] * 2))
    assert obs["header"][0, 0, 0] == 1


def test_configuration_errors_name_the_problem():
    cases = [
        (dict(game="chess"), "chess"),
        (dict(game="generals", max_turns=5), "rules.max_turns: no such option"),
        (dict(game="generals-classic", max_turns=0), "rules.max_turns: 0 is outside 1..=50000"),
        (dict(game="generals-classic", mode="3v3"), "rules.mode"),
        (dict(game="generals-classic", mode="2v2", seats=3), "2v2 is played by 4 seats"),
        (dict(game="generals", seats=3), "seat"),
        (dict(game="generals", side=20), "side 20"),
        (dict(game="generals", opponents={5: "scripted"}), "seat 5 does not exist"),
        (dict(game="generals", opponents={1: "genius"}), "unknown built-in player"),
        (dict(game="generals", observation="pixels"), "observation must be"),
        (dict(game="grid-royale"), "no training environment"),
    ]
    for kwargs, words in cases:
        with pytest.raises(ValueError, match=words):
            VecEnv(num_envs=1, **kwargs)
    with pytest.raises(ValueError, match="num_envs"):
        VecEnv("generals", 0)
    env = VecEnv("generals", 1)
    with pytest.raises(ValueError, match="reset"):
        env.step(np.zeros((1, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="not finished"):
        env.replay(0)
    with pytest.raises(ValueError, match="no environment 3"):
        env.frame(3, 0)
    with pytest.raises(ValueError, match="state"):
        env.load_state(0, "{not json")


def test_a_state_round_trips_through_load_state():
    env = VecEnv("generals", 2, seed=3, masks=True)
    env.reset()
    rng = np.random.default_rng(3)
    for _ in range(30):
        env.step(random_legal(env, rng))
    state = env.state(1)
    env.load_state(0, state)
    obs = env.observations
    assert np.array_equal(obs["army"][0], obs["army"][1])
    assert np.array_equal(obs["tile"][0], obs["tile"][1])
    assert json.loads(env.state(0)) == json.loads(state)
