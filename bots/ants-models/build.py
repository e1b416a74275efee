#!/usr/bin/env python3
"""Builds every Ants model-graph bot directory (bot.toml + model.onnx).

Deterministic and offline: the same onnx package writes the same bytes, and
a test (model/tests/build_script.rs) re-runs this script into a temporary
directory and compares. Usage:

    python3 bots/ants-models/build.py            # rewrite the committed dirs
    python3 bots/ants-models/build.py --bots DIR # write DIR/ants-models/... and
                                                 # DIR/test/ants-models/...

Channels of the `ants/1` adapters with enemy_channels = 1 (see
docs/games/ants-models.md): 0 never seen, 1 water, 2 in view, 3 food,
4 my ant, 5 my hill, 6 enemy ant, 7 enemy hill. Head: [N, 5] scores for
N, E, S, W, stay; ties go to stay, then N, E, S, W.
"""

import argparse
import os
import random

import onnx
from onnx import TensorProto, helper

OPSET = 13
IR_VERSION = 7
CHANNELS = 8
# Score columns and the step each one takes, (drow, dcol).
MOVES = [(-1, 0), (0, 1), (1, 0), (0, -1), (0, 0)]

NEVER, WATER, VISIBLE, FOOD, MY_ANT, MY_HILL, ENEMY_ANT, ENEMY_HILL = range(8)


def window_input(name, radius):
    side = 2 * radius + 1
    return helper.make_tensor_value_info(
        name, TensorProto.FLOAT, ["N", CHANNELS, side, side]
    )


def head_output(name="scores", width=5):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, ["N", width])


def const(name, dims, values, dtype=TensorProto.FLOAT):
    return helper.make_tensor(name, dtype, dims, values)


def model(nodes, inputs, outputs, initializers, name):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    m = helper.make_model(
        graph,
        producer_name="arena bots/ants-models/build.py",
        producer_version="1",
        opset_imports=[helper.make_opsetid("", OPSET)],
    )
    m.ir_version = IR_VERSION
    onnx.checker.check_model(m)
    return m


def window_conv(prefix, radius, weight_of, bias):
    """A Conv whose kernel covers the whole window: one output per score
    column, weight_of(column, channel, drow, dcol) for each window square
    relative to the ant; returns (nodes, initializers, output name)."""
    side = 2 * radius + 1
    weights = []
    for col in range(len(bias)):
        for ch in range(CHANNELS):
            for r in range(side):
                for c in range(side):
                    weights.append(float(weight_of(col, ch, r - radius, c - radius)))
    w = const(prefix + "_w", [len(bias), CHANNELS, side, side], weights)
    b = const(prefix + "_b", [len(bias)], [float(x) for x in bias])
    node = helper.make_node(
        "Conv", ["window", prefix + "_w", prefix + "_b"], [prefix + "_out"]
    )
    return [node], [w, b], prefix + "_out"


def starter():
    """Walks toward visible food and enemy hills, explores what it has not
    seen, spreads out, keeps off water, its own hill and its own ants' steps,
    and avoids squares where enemies outnumber its support."""
    radius = 8

    def dist(col, dr, dc):
        tr, tc = MOVES[col]
        return abs(dr - tr) + abs(dc - tc)

    def earlier_than_me(dr, dc):
        return dr < 0 or (dr == 0 and dc < 0)

    def linear(col, ch, dr, dc):
        d = dist(col, dr, dc)
        near = 1.0 / max(d, 1)
        target = d == 0
        centre = dr == 0 and dc == 0
        w = 0.0
        if ch == FOOD:
            w += 1.0 * near
        if ch == ENEMY_HILL:
            w += 3.0 * near
        if ch == NEVER:
            w += 0.04 * near
        if ch in (WATER, VISIBLE):
            # Land out of view has no channel: everything not never-seen,
            # water or visible; its attraction is the bias minus these.
            w -= 0.02 * near
        if ch == MY_ANT and not centre:
            w -= 0.08 * near
            if target:
                w -= 4.0
            elif d == 1 and earlier_than_me(dr, dc):
                # An ant before me in mine order could step there too: it
                # has the right of way.
                w -= 4.0
        if ch == WATER and target:
            w -= 4.0
        if ch == MY_HILL and target:
            w -= 1.5
        return w

    def bias(col):
        # The land-out-of-view attraction's constant part (see above).
        side = 2 * radius + 1
        return sum(
            0.02 / max(dist(col, r - radius, c - radius), 1)
            for r in range(side)
            for c in range(side)
        )

    def strength(col, ch, dr, dc):
        tr, tc = MOVES[col]
        d2 = (dr - tr) ** 2 + (dc - tc) ** 2
        centre = dr == 0 and dc == 0
        if ch == ENEMY_ANT and d2 <= 10:
            return 1.0
        if ch == MY_ANT and not centre and d2 <= 5:
            return -1.0
        return 0.0

    n1, i1, a = window_conv("linear", radius, linear, [bias(c) for c in range(5)])
    n2, i2, s = window_conv("strength", radius, strength, [0.0] * 5)
    nodes = n1 + n2 + [
        helper.make_node("Relu", [s], ["danger"]),
        helper.make_node("Mul", ["danger", "danger_w"], ["penalty"]),
        helper.make_node("Add", [a, "penalty"], ["score4"]),
        helper.make_node("Flatten", ["score4"], ["scores"], axis=1),
    ]
    inits = i1 + i2 + [const("danger_w", [], [-2.0])]
    m = model(nodes, [window_input("window", radius)], [head_output()], inits, "starter")
    toml = (
        '# The Ants starter model: a hand-weighted convolution over each ant\'s\n'
        "# local window (bots/ants-models/build.py writes this directory).\n"
        'adapters = "ants/1"\n\n'
        "[inputs.window]\n"
        'adapter = "local_window"\n'
        f"radius = {radius}\n\n"
        "[head]\n"
        'output = "scores"\n'
    )
    return m, toml


def stay():
    """Every ant stays: zero weights, and a bias that puts stay highest."""
    nodes, inits, out = window_conv("hold", 0, lambda *_: 0.0, [0, 0, 0, 0, 1])
    nodes.append(helper.make_node("Flatten", [out], ["scores"], axis=1))
    m = model(nodes, [window_input("window", 0)], [head_output()], inits, "stay")
    return m, simple_toml("stay: every ant holds", 0)


def random_model():
    """Arbitrary but deterministic orders: fixed pseudo-random weights over
    the window, scaled up and folded through a sine, so that nearby inputs
    give unrelated scores."""
    radius = 2
    rng = random.Random(20110101)
    side = 2 * radius + 1
    table = {
        (col, ch, r, c): rng.uniform(-1.0, 1.0)
        for col in range(5)
        for ch in range(CHANNELS)
        for r in range(-radius, radius + 1)
        for c in range(-radius, radius + 1)
    }
    bias = [rng.uniform(-1.0, 1.0) for _ in range(5)]
    nodes, inits, out = window_conv(
        "noise", radius, lambda col, ch, r, c: table[(col, ch, r, c)], bias
    )
    assert side == 5
    nodes += [
        helper.make_node("Mul", [out, "gain"], ["scaled"]),
        helper.make_node("Sin", ["scaled"], ["wave"]),
        helper.make_node("Flatten", ["wave"], ["scores"], axis=1),
    ]
    inits.append(const("gain", [], [977.0]))
    m = model(nodes, [window_input("window", radius)], [head_output()], inits, "random")
    return m, simple_toml("random: arbitrary, deterministic orders", radius)


def simple_toml(what, radius):
    return (
        f"# {what} (bots/ants-models/build.py writes this directory).\n"
        'adapters = "ants/1"\n\n'
        "[inputs.window]\n"
        'adapter = "local_window"\n'
        f"radius = {radius}\n\n"
        "[head]\n"
        'output = "scores"\n'
    )


def hold_scores(extra_nodes, extra_inits, head_from, name, width=5):
    """A stay model whose head goes through extra nodes first."""
    nodes, inits, out = window_conv("hold", 0, lambda *_: 0.0, [0] * (width - 1) + [1])
    nodes.append(helper.make_node("Flatten", [out], ["held"], axis=1))
    nodes += extra_nodes
    if head_from != "scores":
        nodes.append(helper.make_node("Identity", [head_from], ["scores"]))
    m = model(
        nodes, [window_input("window", 0)], [head_output(width=width)], inits + extra_inits, name
    )
    return m, simple_toml(name + ": a malformed model for the tests", 0)


def wrong_head():
    return hold_scores([], [], "held", "wrong-head", width=4)


def unsupported_op():
    # Det is a standard operator (opset 11) that tract does not implement.
    nodes = [
        helper.make_node("Det", ["square"], ["det"]),
        helper.make_node("Add", ["held", "det"], ["scores"]),
    ]
    return hold_scores(nodes, [const("square", [2, 2], [1.0, 2.0, 3.0, 4.0])], "scores", "unsupported-op")


def nan():
    # 0/0 computed from the input, so that no build step can fold it away.
    nodes = [
        helper.make_node("Sub", ["held", "held"], ["zero"]),
        helper.make_node("Div", ["zero", "zero"], ["scores"]),
    ]
    return hold_scores(nodes, [], "scores", "nan")


def zero_of(name):
    """Nodes computing `nothing` = 0 from `name` (finite) in a way no
    simplification proves, so that the branch that made `name` stays in
    the graph (a product with a zero constant would be pruned)."""
    return [
        helper.make_node("Abs", [name], [name + "_abs"]),
        helper.make_node("Neg", [name + "_abs"], [name + "_neg"]),
        helper.make_node("Relu", [name + "_neg"], ["nothing"]),
    ]


def too_slow():
    # Two products of a 1024x1024 matrix that depends on the input (a ramp
    # plus the input's sum, so nothing can be folded at load): about 2.1e9
    # multiply-accumulates a turn, whatever the ant count.
    n = 1024
    nodes = [
        helper.make_node("Range", ["start", "count", "one"], ["ramp"]),
        helper.make_node("Mul", ["ramp", "step"], ["small"]),
        helper.make_node("Reshape", ["small", "square_shape"], ["grid"]),
        helper.make_node("ReduceSum", ["held"], ["total"], keepdims=0),
        helper.make_node("Add", ["grid", "total"], ["m0"]),
        helper.make_node("MatMul", ["m0", "m0"], ["m1"]),
        helper.make_node("MatMul", ["m1", "m0"], ["m2"]),
        helper.make_node("ReduceSum", ["m2"], ["sum"], keepdims=0),
    ] + zero_of("sum") + [
        helper.make_node("Add", ["held", "nothing"], ["scores"]),
    ]
    inits = [
        const("start", [], [0.0]),
        const("count", [], [float(n * n)]),
        const("one", [], [1.0]),
        const("step", [], [1e-6]),
        const("square_shape", [2], [n, n], TensorProto.INT64),
    ]
    return hold_scores(nodes, inits, "scores", "too-slow")


def huge_alloc():
    # The head broadcast 2^27 times: 2.5 GiB an ant, a size known only in
    # terms of the ant count, made by a copy that costs no
    # multiply-accumulates, so the check passes it and only a turn's
    # evaluation meets it.
    nodes = [
        helper.make_node("Unsqueeze", ["held", "axis1"], ["held3"]),
        helper.make_node("Expand", ["held3", "wide"], ["big"]),
        helper.make_node("Concat", ["big", "held3"], ["bigger"], axis=1),
        helper.make_node("Gather", ["bigger", "last"], ["picked"], axis=1),
    ] + zero_of("picked") + [
        helper.make_node("Add", ["held", "nothing"], ["scores"]),
    ]
    inits = [
        const("axis1", [1], [1], TensorProto.INT64),
        const("wide", [3], [1, 1 << 27, 1], TensorProto.INT64),
        const("last", [], [1 << 27], TensorProto.INT64),
    ]
    return hold_scores(nodes, inits, "scores", "huge-alloc")


BOTS = {
    "ants-models/starter": starter,
    "ants-models/stay": stay,
    "ants-models/random": random_model,
    "test/ants-models/wrong-head": wrong_head,
    "test/ants-models/unsupported-op": unsupported_op,
    "test/ants-models/nan": nan,
    "test/ants-models/too-slow": too_slow,
    "test/ants-models/huge-alloc": huge_alloc,
}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", default=os.path.dirname(here), help="the bots/ directory")
    args = parser.parse_args()
    for path, build in BOTS.items():
        m, toml = build()
        out = os.path.join(args.bots, path)
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "model.onnx"), "wb") as f:
            f.write(m.SerializeToString(deterministic=True))
        with open(os.path.join(out, "bot.toml"), "w", newline="\n") as f:
            f.write(toml)


if __name__ == "__main__":
    main()
