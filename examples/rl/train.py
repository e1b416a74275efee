#!/usr/bin/env python3
"""Train -> export -> submit, on a CPU, with numpy and onnx only.

    pip install ./python onnx
    python3 examples/rl/train.py OUT_DIR [--envs 8] [--epochs 8] [--arena target/release/arena]

1. Plays games of the competition ruleset between two copies of the
   built-in scripted opponent in `arena_rl` and records every observation
   of both seats (the compact planes and the memory, `memory=True`) with
   the action the scripted player took (read back from the episode's
   replay).
2. Trains a small convolutional policy to imitate it: two 3x3
   convolutions (ten feature planes -> 16 -> 10 scores per cell), a
   softmax over the legal entries of the H x W x 10 head (`arena_rl`'s
   masks), cross-entropy, Adam. Pure numpy: im2col forward and backward.
3. Exports the same network to ONNX with the `onnx` package, computing
   the ten feature planes inside the graph from the `compact` and
   `memory` adapters, and checks that onnx's reference evaluator gives
   the numpy network's scores on recorded observations.
4. Writes OUT_DIR (bot.toml + model.onnx). With `--arena`, runs `arena
   model check` and plays it with `arena play` against the starter bots.

docs/rl.md walks through it; docs/games/generals-models.md is the
contract the exported graph follows.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from arena_rl import VecEnv
from arena_rl.env import encode_flat

GAME = "generals"
HIDDEN = 16
FEATURES = 10
REPO = Path(__file__).resolve().parents[2]


# --- features: the same ten planes in numpy and in the graph -------------

def features(tile: np.ndarray, owner: np.ndarray, army: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """[B, 10, S, S] float32 from the compact planes and the memory's
    `seen` plane of B observations."""
    army = army.astype(np.float32)
    log_army = np.log1p(army)
    visible = (tile >= 1) & (tile <= 4)
    mine = (owner == 1).astype(np.float32)
    enemy = (owner == 2).astype(np.float32)
    neutral = ((owner == 0) & visible).astype(np.float32)
    open_ = ((tile != 2) & (tile != 5)).astype(np.float32)
    return np.stack(
        [
            log_army * mine,
            log_army * enemy,
            log_army * neutral,
            mine,
            enemy,
            open_,
            (tile == 3).astype(np.float32),
            (tile == 4).astype(np.float32),
            1.0 - seen.astype(np.float32),
            np.ones_like(mine),
        ],
        axis=1,
    ).astype(np.float32)


def feature_nodes(nodes: list, inits: list) -> str:
    """The graph nodes computing `features` from the inputs `compact` and
    `memory`; returns the name of the [1, 10, S, S] result."""

    def const(name, value, dtype=np.float32):
        inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def node(kind, inputs, out, **attrs):
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def equals(x, value, out):
        return node("Cast", [node("Equal", [x, const(f"{out}_v", value)], f"{out}_b")], out, to=TensorProto.FLOAT)

    node("Split", ["compact", const("thirds", [1, 1, 1], np.int64)], "tile", axis=1)
    nodes[-1].output[:] = ["tile", "owner", "army"]
    seen = node("Slice", ["memory", const("s0", [0], np.int64), const("s1", [1], np.int64), const("ax1", [1], np.int64)], "seen")
    log_army = node("Log", [node("Add", ["army", const("one", 1.0)], "army1")], "log_army")
    mine = equals("owner", 1.0, "mine")
    enemy = equals("owner", 2.0, "enemy")
    neutral_owner = equals("owner", 0.0, "neutral_owner")
    ge1 = node("Cast", [node("GreaterOrEqual", ["tile", const("t1", 1.0)], "ge1_b")], "ge1", to=TensorProto.FLOAT)
    le4 = node("Cast", [node("LessOrEqual", ["tile", const("t4", 4.0)], "le4_b")], "le4", to=TensorProto.FLOAT)
    visible = node("Mul", [ge1, le4], "visible")
    neutral = node("Mul", [neutral_owner, visible], "neutral")
    mountain = equals("tile", 2.0, "mountain")
    fog_structure = equals("tile", 5.0, "fog_structure")
    open_ = node("Sub", [node("Sub", [const("one_b", 1.0), mountain], "open_a"), fog_structure], "open")
    castle = equals("tile", 3.0, "castle")
    general = equals("tile", 4.0, "general")
    unseen = node("Sub", [const("one_c", 1.0), seen], "unseen")
    ones = node("Add", [node("Mul", [mine, const("zero", 0.0)], "zeros"), const("one_d", 1.0)], "ones")
    planes = [
        node("Mul", [log_army, mine], "f_army_mine"),
        node("Mul", [log_army, enemy], "f_army_enemy"),
        node("Mul", [log_army, neutral], "f_army_neutral"),
        mine,
        enemy,
        open_,
        castle,
        general,
        unseen,
        ones,
    ]
    return node("Concat", planes, "features", axis=1)


# --- the network in numpy ------------------------------------------------

def im2col(x: np.ndarray) -> np.ndarray:
    """[B, C, S, S] -> [B * S * S, C * 9], zero-padded 3x3 windows, columns
    ordered (channel, dy, dx) as ONNX's Conv weights are."""
    b, c, s, _ = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.empty((b, c, 3, 3, s, s), dtype=x.dtype)
    for dy in range(3):
        for dx in range(3):
            cols[:, :, dy, dx] = padded[:, :, dy:dy + s, dx:dx + s]
    return cols.transpose(0, 4, 5, 1, 2, 3).reshape(b * s * s, c * 9)


def col2im(cols: np.ndarray, b: int, c: int, s: int) -> np.ndarray:
    """The adjoint of `im2col`: [B * S * S, C * 9] -> [B, C, S, S]."""
    cols = cols.reshape(b, s, s, c, 3, 3).transpose(0, 3, 4, 5, 1, 2)
    padded = np.zeros((b, c, s + 2, s + 2), dtype=cols.dtype)
    for dy in range(3):
        for dx in range(3):
            padded[:, :, dy:dy + s, dx:dx + s] += cols[:, :, dy, dx]
    return padded[:, :, 1:-1, 1:-1]


class Policy:
    def __init__(self, actions: int, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.w1 = (rng.standard_normal((FEATURES * 9, HIDDEN)) * np.sqrt(2 / (FEATURES * 9))).astype(np.float32)
        self.b1 = np.zeros(HIDDEN, np.float32)
        self.w2 = (rng.standard_normal((HIDDEN * 9, actions)) * np.sqrt(1 / (HIDDEN * 9))).astype(np.float32)
        self.b2 = np.zeros(actions, np.float32)
        self.actions = actions

    def params(self):
        return [self.w1, self.b1, self.w2, self.b2]

    def forward(self, x: np.ndarray):
        """Scores [B, S * S * A] and what the backward pass needs."""
        b, _, s, _ = x.shape
        p1 = im2col(x)
        h = np.maximum(p1 @ self.w1 + self.b1, 0.0)
        hidden = h.reshape(b, s, s, HIDDEN).transpose(0, 3, 1, 2)
        p2 = im2col(hidden)
        z = p2 @ self.w2 + self.b2
        return z.reshape(b, s * s * self.actions), (p1, h, p2, b, s)

    def backward(self, dz: np.ndarray, cache):
        p1, h, p2, b, s = cache
        dz = dz.reshape(b * s * s, self.actions)
        dw2 = p2.T @ dz
        db2 = dz.sum(0)
        dhidden = col2im(dz @ self.w2.T, b, HIDDEN, s)
        dh = dhidden.transpose(0, 2, 3, 1).reshape(b * s * s, HIDDEN) * (h > 0)
        return [p1.T @ dh, dh.sum(0), dw2, db2]


def masked_cross_entropy(scores: np.ndarray, mask: np.ndarray, target: np.ndarray):
    """Mean loss and its gradient: softmax over each row's legal entries."""
    logits = np.where(mask, scores, -1e9)
    logits = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(logits) * mask
    p /= p.sum(axis=1, keepdims=True)
    rows = np.arange(len(target))
    loss = -np.log(p[rows, target] + 1e-12).mean()
    grad = p
    grad[rows, target] -= 1.0
    return loss, grad / len(target)


# --- data ----------------------------------------------------------------

def collect(envs: int, seed: int, max_steps: int):
    """Observations of both scripted seats and the actions they took."""
    env = VecEnv(GAME, envs, seed=seed, opponents={0: "scripted", 1: "scripted"}, memory=True, masks=True, record=True)
    env.reset()
    obs = env.observations
    kept = [[] for _ in range(envs)]
    done = [False] * envs
    actions = np.zeros((envs, 2, 5), dtype=np.int64)
    samples = {k: [] for k in ("tile", "owner", "army", "seen", "mask", "target")}
    def record(i: int, finished: bool, scratch: str) -> None:
        """Pairs environment i's kept observations with the actions of its
        episode's replay."""
        path = os.path.join(scratch, f"{i}.json")
        env.save_replay(i, path, finished=finished)
        with open(path) as f:
            turns = json.load(f)["turns"]
        for step, ob in zip(turns, kept[i]):
            for seat in range(2):
                kind, row, col, direction, split = step["actions"][seat]
                target = encode_flat(kind, row, col, direction, split, side=env.side, builds=env.builds)
                flat_mask = ob["mask"][seat].reshape(-1)
                if not flat_mask[target]:
                    continue  # an order the mask does not offer (a move into fog)
                for k in ("tile", "owner", "army", "seen"):
                    samples[k].append(ob[k][seat])
                samples["mask"].append(flat_mask)
                samples["target"].append(target)

    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(max_steps):
            for i in range(envs):
                if not done[i]:
                    kept[i].append({k: obs[k][i].copy() for k in ("tile", "owner", "army", "mask")} | {"seen": obs["memory"][i, :, 0].copy()})
            _, _, terminated, _, _ = env.step(actions)
            for i in np.nonzero(terminated)[0]:
                if not done[i]:
                    done[i] = True
                    record(int(i), True, scratch)
            if all(done):
                break
        # Games still running at the cap: the turns played so far.
        for i in range(envs):
            if not done[i]:
                record(i, False, scratch)
    data = {k: np.stack(v) for k, v in samples.items()}
    return data, env.side, env.actions_per_cell


# --- export --------------------------------------------------------------

def export(policy: Policy, side: int) -> onnx.ModelProto:
    nodes, inits = [], []
    x = feature_nodes(nodes, inits)
    w1 = policy.w1.T.reshape(HIDDEN, FEATURES, 3, 3)
    w2 = policy.w2.T.reshape(policy.actions, HIDDEN, 3, 3)
    inits += [
        numpy_helper.from_array(np.ascontiguousarray(w1), "w1"),
        numpy_helper.from_array(policy.b1, "b1"),
        numpy_helper.from_array(np.ascontiguousarray(w2), "w2"),
        numpy_helper.from_array(policy.b2, "b2"),
        numpy_helper.from_array(np.array([side * side, policy.actions], dtype=np.int64), "head_shape"),
    ]
    nodes += [
        helper.make_node("Conv", [x, "w1", "b1"], ["conv1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv1"], ["hidden"]),
        helper.make_node("Conv", ["hidden", "w2", "b2"], ["conv2"], pads=[1, 1, 1, 1]),
        helper.make_node("Transpose", ["conv2"], ["per_cell"], perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", ["per_cell", "head_shape"], ["scores"]),
    ]
    inputs = [
        helper.make_tensor_value_info("compact", TensorProto.FLOAT, [1, 3, side, side]),
        helper.make_tensor_value_info("memory", TensorProto.FLOAT, [1, 6, side, side]),
    ]
    outputs = [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [side * side, policy.actions])]
    graph = helper.make_graph(nodes, "imitation", inputs, outputs, inits)
    model = helper.make_model(graph, producer_name="arena examples/rl/train.py", opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    return model


BOT_TOML = """# A small convolutional policy imitating arena_rl's scripted opponent,
# trained and exported by examples/rl/train.py.
adapters = "generals/1"

[inputs.compact]
adapter = "compact"

[inputs.memory]
adapter = "memory"

[head]
output = "scores"
"""


def check_export(model: onnx.ModelProto, policy: Policy, data: dict, count: int = 8) -> float:
    """The largest difference between the graph's scores (onnx's reference
    evaluator, from the adapters' tensors) and the numpy network's."""
    evaluator = ReferenceEvaluator(model)
    worst = 0.0
    for i in np.linspace(0, len(data["target"]) - 1, count).astype(int):
        compact = np.stack([data["tile"][i], data["owner"][i], data["army"][i]]).astype(np.float32)[None]
        memory = np.zeros((1, 6) + data["seen"][i].shape, np.float32)
        memory[0, 0] = data["seen"][i]
        graph = evaluator.run(None, {"compact": compact, "memory": memory})[0].reshape(-1)
        x = features(data["tile"][i:i + 1], data["owner"][i:i + 1], data["army"][i:i + 1], data["seen"][i:i + 1])
        mine, _ = policy.forward(x)
        worst = max(worst, float(np.abs(graph - mine[0]).max()))
    return worst


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the model directory to write")
    parser.add_argument("--envs", type=int, default=8, help="games recorded (one episode each)")
    parser.add_argument("--max-steps", type=int, default=1200, help="turns recorded at most per game")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--arena", help="an arena binary: check the model and play it against the starters")
    parser.add_argument("--games", type=int, default=4, help="games against each starter with --arena")
    args = parser.parse_args(argv)

    data, side, actions = collect(args.envs, args.seed, args.max_steps)
    n = len(data["target"])
    print(f"recorded {n} decisions of the scripted player on {side}x{side} boards")
    policy = Policy(actions, seed=args.seed)
    moments = [(np.zeros_like(p), np.zeros_like(p)) for p in policy.params()]
    rng = np.random.default_rng(args.seed)
    step = 0
    for epoch in range(args.epochs):
        order = rng.permutation(n)
        losses, hits = [], 0
        for start in range(0, n, args.batch):
            idx = order[start:start + args.batch]
            x = features(data["tile"][idx], data["owner"][idx], data["army"][idx], data["seen"][idx])
            scores, cache = policy.forward(x)
            loss, grad = masked_cross_entropy(scores, data["mask"][idx], data["target"][idx])
            losses.append(loss)
            hits += int((np.where(data["mask"][idx], scores, -np.inf).argmax(1) == data["target"][idx]).sum())
            step += 1
            for p, g, (m, v) in zip(policy.params(), policy.backward(grad, cache), moments):
                m *= 0.9
                m += 0.1 * g
                v *= 0.999
                v += 0.001 * g * g
                p -= 3e-3 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
        print(f"epoch {epoch + 1}: loss {np.mean(losses):.3f}, agrees with the scripted player on {hits / n:.1%} of turns")

    model = export(policy, side)
    worst = check_export(model, policy, data)
    print(f"the exported graph gives the numpy network's scores within {worst:.2e}")
    if worst > 1e-3:
        print("the export disagrees with the network", file=sys.stderr)
        return 1
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(out / "model.onnx"))
    (out / "bot.toml").write_text(BOT_TOML)
    print(f"wrote {out}/bot.toml and {out}/model.onnx")

    if args.arena:
        check = subprocess.run([args.arena, "model", "check", str(out), "--game", GAME])
        if check.returncode != 0:
            return 1
        for starter in ("starter-python", "starter-rust"):
            points = 0.0
            for seed in range(1, args.games + 1):
                bots = [str(out), str(REPO / "bots" / starter)]
                if seed % 2 == 0:
                    bots.reverse()
                run = subprocess.run(
                    [args.arena, "play", "--game", GAME, "--seed", str(seed), "--json", *bots],
                    capture_output=True, text=True,
                )
                if run.returncode != 0:
                    print(run.stderr, file=sys.stderr)
                    return 1
                result = json.loads(run.stdout)
                seat = 0 if seed % 2 == 1 else 1
                me = result["players"][seat]
                if me["forfeit"] is not None or me["faults"]["strike"]:
                    print(f"the model did not play cleanly: {me}", file=sys.stderr)
                    return 1
                points += me["score"]
            print(f"against {starter}: {points:g} points of {args.games}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
