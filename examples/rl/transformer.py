#!/usr/bin/env python3
"""Writes an (untrained) transformer policy of the paper's shape as a
generals model directory, to measure what such a policy costs in a match:

    python3 examples/rl/transformer.py OUT_DIR [--layers 6] [--dim 256] [--heads 8]
    arena model check OUT_DIR --game generals
    arena bench model OUT_DIR --game generals

The shape (docs/games/generals-models.md for the inputs): the `compact`
planes and the `memory` planes (9 channels on the 21x21 competition board)
are cut into 3x3 patches, each embedded into one token (a 3x3 convolution
of stride 3: 49 tokens); the `history` adapter's 512-turn windows of the
opponents' land and army are each projected by a two-layer MLP into one
more token. The 51 tokens, with a learned position embedding, go through
pre-norm transformer layers (multi-head self-attention, then a 4x MLP with
GELU). The policy head maps each patch token to its 3x3 cells' ten scores
and rearranges them into the `[441, 10]` head. The weights are random
(normal, std 0.02, a fixed seed): the cost of a turn does not depend on
them. Needs numpy and onnx.
"""

import argparse
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SIDE = 21
PATCH = 3
GRID = SIDE // PATCH  # 7 patches a side
ACTIONS = 10  # the competition: pass, 4 directions x (all, half), build
CHANNELS = 3 + 6  # compact + memory
WINDOW = 512
OPSET = 17


class Graph:
    """Nodes and initializers under unique names."""

    def __init__(self, seed: int):
        self.nodes, self.inits, self.count = [], [], 0
        self.rng = np.random.default_rng(seed)

    def name(self, base: str) -> str:
        self.count += 1
        return f"{base}_{self.count}"

    def const(self, base: str, array) -> str:
        name = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, base: str, *shape) -> str:
        return self.const(base, (self.rng.standard_normal(shape) * 0.02).astype(np.float32))

    def op(self, kind: str, inputs, **attrs) -> str:
        out = self.name(kind.lower())
        self.nodes.append(helper.make_node(kind, list(inputs), [out], **attrs))
        return out

    def linear(self, x: str, fan_in: int, fan_out: int) -> str:
        y = self.op("MatMul", [x, self.weight("w", fan_in, fan_out)])
        return self.op("Add", [y, self.const("b", np.zeros(fan_out, np.float32))])

    def norm(self, x: str, dim: int) -> str:
        scale = self.const("ln_scale", np.ones(dim, np.float32))
        bias = self.const("ln_bias", np.zeros(dim, np.float32))
        return self.op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=1e-5)

    def gelu(self, x: str) -> str:
        scaled = self.op("Mul", [x, self.const("inv_sqrt2", np.float32(1 / math.sqrt(2)))])
        erf = self.op("Erf", [scaled])
        one_plus = self.op("Add", [erf, self.const("one", np.float32(1.0))])
        half_x = self.op("Mul", [x, self.const("half", np.float32(0.5))])
        return self.op("Mul", [half_x, one_plus])

    def shape(self, *dims) -> str:
        return self.const("shape", np.array(dims, dtype=np.int64))


def build(layers: int, dim: int, heads: int, seed: int = 7):
    assert dim % heads == 0
    g = Graph(seed)
    tokens = GRID * GRID + 2
    head_dim = dim // heads

    # Patch tokens: [1, 9, 21, 21] -> conv stride 3 -> [1, dim, 7, 7] -> [49, dim].
    planes = g.op("Concat", ["compact", "memory"], axis=1)
    # Armies and turns are large raw numbers: a log keeps the sums tame.
    magnitude = g.op("Abs", [planes])
    signs = g.op("Sign", [planes])
    logs = g.op("Log", [g.op("Add", [magnitude, g.const("one", np.float32(1.0))])])
    features = g.op("Mul", [signs, logs])
    patches = g.op(
        "Conv",
        [features, g.weight("patch_w", dim, CHANNELS, PATCH, PATCH), g.const("patch_b", np.zeros(dim, np.float32))],
        strides=[PATCH, PATCH],
    )
    flat = g.op("Reshape", [patches, g.shape(dim, GRID * GRID)])
    spatial = g.op("Transpose", [flat], perm=[1, 0])

    # Two window tokens: [1, 512, 2] -> [2, 512] -> MLP -> [2, dim].
    windows = g.op("Reshape", [g.op("Transpose", ["history"], perm=[0, 2, 1]), g.shape(2, WINDOW)])
    windows = g.op("Log", [g.op("Add", [windows, g.const("one", np.float32(1.0))])])
    hidden = g.gelu(g.linear(windows, WINDOW, dim))
    window_tokens = g.linear(hidden, dim, dim)

    x = g.op("Concat", [spatial, window_tokens], axis=0)
    x = g.op("Add", [x, g.weight("position", tokens, dim)])

    for _ in range(layers):
        h = g.norm(x, dim)
        q, k, v = (g.linear(h, dim, dim) for _ in range(3))

        def split(t):
            return g.op("Transpose", [g.op("Reshape", [t, g.shape(tokens, heads, head_dim)])], perm=[1, 0, 2])

        q, k, v = split(q), split(k), split(v)
        scores = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 2, 1])])
        scores = g.op("Mul", [scores, g.const("scale", np.float32(1 / math.sqrt(head_dim)))])
        attention = g.op("Softmax", [scores], axis=-1)
        mixed = g.op("MatMul", [attention, v])
        merged = g.op("Reshape", [g.op("Transpose", [mixed], perm=[1, 0, 2]), g.shape(tokens, dim)])
        x = g.op("Add", [x, g.linear(merged, dim, dim)])
        h = g.norm(x, dim)
        x = g.op("Add", [x, g.linear(g.gelu(g.linear(h, dim, 4 * dim)), 4 * dim, dim)])

    x = g.norm(x, dim)
    # Policy head: each patch token scores its 3x3 cells' actions.
    patch_tokens = g.op("Slice", [x, g.const("start", np.array([0], np.int64)), g.const("end", np.array([GRID * GRID], np.int64)), g.const("axis", np.array([0], np.int64))])
    per_patch = g.linear(patch_tokens, dim, PATCH * PATCH * ACTIONS)
    grid = g.op("Reshape", [per_patch, g.shape(GRID, GRID, PATCH, PATCH, ACTIONS)])
    cells = g.op("Transpose", [grid], perm=[0, 2, 1, 3, 4])
    g.nodes.append(helper.make_node("Reshape", [cells, g.shape(SIDE * SIDE, ACTIONS)], ["scores"]))

    inputs = [
        helper.make_tensor_value_info("compact", TensorProto.FLOAT, [1, 3, SIDE, SIDE]),
        helper.make_tensor_value_info("memory", TensorProto.FLOAT, [1, 6, SIDE, SIDE]),
        helper.make_tensor_value_info("history", TensorProto.FLOAT, [1, WINDOW, 2]),
    ]
    outputs = [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [SIDE * SIDE, ACTIONS])]
    graph = helper.make_graph(g.nodes, "transformer", inputs, outputs, g.inits)
    model = helper.make_model(graph, producer_name="arena examples/rl/transformer.py", opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


TOML = """# An untrained transformer of the paper's shape ({layers} layers, width {dim},
# {heads} heads), written by examples/rl/transformer.py.
adapters = "generals/1"

[inputs.compact]
adapter = "compact"

[inputs.memory]
adapter = "memory"

[inputs.history]
adapter = "history"
turns = 512

[head]
output = "scores"
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--heads", type=int, default=8)
    args = parser.parse_args()
    model = build(args.layers, args.dim, args.heads)
    os.makedirs(args.out, exist_ok=True)
    onnx.save(model, os.path.join(args.out, "model.onnx"))
    with open(os.path.join(args.out, "bot.toml"), "w") as f:
        f.write(TOML.format(layers=args.layers, dim=args.dim, heads=args.heads))
    params = sum(int(np.prod(i.dims)) for i in model.graph.initializer)
    print(f"{args.out}: {args.layers} layers, width {args.dim}, {args.heads} heads, {params:,} parameters")


if __name__ == "__main__":
    main()
