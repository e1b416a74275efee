#!/usr/bin/env python3
"""Builds the generals model-graph bot directories (bot.toml + model.onnx).

Deterministic and offline: the same onnx package writes the same bytes, and
a test (model/tests/build_script.rs) re-runs this script into a temporary
directory and compares. Usage:

    python3 bots/generals-models/build.py            # rewrite the committed dirs
    python3 bots/generals-models/build.py --bots DIR # write DIR/generals-models/...
                                                     # and DIR/test/generals-models/...

The models read the `generals/1` adapters (docs/games/generals-models.md):
`compact` (tile, owner and army codes), `memory` (its first plane: ever
seen), `history` and `totals`. The head is [side * side, A] scores, one row
per cell of the padded board, A = 10 for the competition (pass, four
directions with all or half the army, build) and 9 for classic.

`greedy` moves the largest army it can onto a cell it does not own, an
enemy's first, towards cells it has never seen; it passes when nothing can
move and never builds. It is a fixed 3x3 convolution over four feature
planes, so its choice is easy to work out by hand. Whether it sends all or
half of an army depends on the rest of what it reads: half moves gain with
the cells it has ever seen (memory) and its land (totals), and lose with
the opponents' land eight turns ago (history), so a policy evaluated
without its memory or history plays differently.
"""

import argparse
import os

import onnx
from onnx import TensorProto, helper

OPSET = 13
IR_VERSION = 7
# Tile and owner codes of the frames.
MOUNTAIN, FOG_STRUCTURE = 2, 5
ME, OPPONENT = 1, 2
# Head columns per cell: pass, then (up, down, left, right) x (all, half).
STEPS = [(-1, 0), (1, 0), (0, -1), (0, 1)]
FEATURES = ["army_mine", "target", "enemy", "unseen"]


def const(name, dims, values, dtype=TensorProto.FLOAT):
    return helper.make_tensor(name, dtype, dims, values)


def greedy(side, width, ruleset):
    """The greedy policy for a `side` x `side` board and `width` columns."""
    nodes = [
        helper.make_node("Split", ["compact", "thirds"], ["tile", "owner", "army"], axis=1),
        helper.make_node("Equal", ["owner", "me"], ["is_mine"]),
        helper.make_node("Cast", ["is_mine"], ["mine"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["army", "mine"], ["army_mine"]),
        helper.make_node("Equal", ["tile", "mountain"], ["is_mountain"]),
        helper.make_node("Equal", ["tile", "fog_structure"], ["is_fog_structure"]),
        helper.make_node("Or", ["is_mountain", "is_fog_structure"], ["is_blocked"]),
        helper.make_node("Not", ["is_blocked"], ["is_open"]),
        helper.make_node("Cast", ["is_open"], ["open"], to=TensorProto.FLOAT),
        helper.make_node("Sub", ["one", "mine"], ["not_mine"]),
        helper.make_node("Mul", ["not_mine", "open"], ["target"]),
        helper.make_node("Equal", ["owner", "opponent"], ["is_enemy"]),
        helper.make_node("Cast", ["is_enemy"], ["enemy"], to=TensorProto.FLOAT),
        helper.make_node("Slice", ["memory", "first", "second", "channel_axis"], ["seen"]),
        helper.make_node("Sub", ["one", "seen"], ["unseen"]),
        helper.make_node("Concat", FEATURES, ["features"], axis=1),
        helper.make_node("Conv", ["features", "kernel", "bias"], ["cells"], pads=[1, 1, 1, 1]),
        # One number added to every half move: cells ever seen, own land,
        # the opponents' land eight turns ago.
        helper.make_node("ReduceSum", ["seen"], ["seen_total"], keepdims=0),
        helper.make_node("Mul", ["seen_total", "seen_weight"], ["seen_term"]),
        helper.make_node("Mul", ["totals", "totals_weight"], ["totals_weighted"]),
        helper.make_node("ReduceSum", ["totals_weighted"], ["totals_term"], keepdims=0),
        helper.make_node("Mul", ["history", "history_weight"], ["history_weighted"]),
        helper.make_node("ReduceSum", ["history_weighted"], ["history_term"], keepdims=0),
        helper.make_node("Add", ["totals_term", "history_term"], ["read_term"]),
        helper.make_node("Add", ["read_term", "seen_term"], ["half_term"]),
        helper.make_node("Mul", ["half_columns", "half_term"], ["half_plane"]),
        helper.make_node("Add", ["cells", "half_plane"], ["planes"]),
        helper.make_node("Transpose", ["planes"], ["per_cell"], perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", ["per_cell", "head_shape"], ["scores"]),
    ]
    kernel = [0.0] * (width * len(FEATURES) * 9)

    def w(out, feature, dr, dc, value):
        kernel[((out * len(FEATURES) + FEATURES.index(feature)) * 3 + 1 + dr) * 3 + 1 + dc] = value

    for d, (dr, dc) in enumerate(STEPS):
        for half in (0, 1):
            out = 1 + 2 * d + half
            w(out, "army_mine", 0, 0, 0.6 if half else 1.0)
            w(out, "target", dr, dc, 10.0)
            w(out, "enemy", dr, dc, 5.0)
            w(out, "unseen", dr, dc, 1.0)
    bias = [0.0] * width
    if width == 10:
        bias[9] = -1000.0  # never build
    history_turns = 8
    # totals: turn, my land, my army, allies' land, army, opponents' land, army
    totals_weight = [0.0, 0.01, 0.0, 0.0, 0.0, 0.0, 0.0]
    # The oldest row's land (eight turns ago, the current turn included).
    history_weight = [0.0] * (2 * history_turns)
    history_weight[0] = -0.02
    inits = [
        const("thirds", [3], [1, 1, 1], TensorProto.INT64),
        const("me", [], [float(ME)]),
        const("opponent", [], [float(OPPONENT)]),
        const("mountain", [], [float(MOUNTAIN)]),
        const("fog_structure", [], [float(FOG_STRUCTURE)]),
        const("one", [], [1.0]),
        const("first", [1], [0], TensorProto.INT64),
        const("second", [1], [1], TensorProto.INT64),
        const("channel_axis", [1], [1], TensorProto.INT64),
        const("kernel", [width, len(FEATURES), 3, 3], kernel),
        const("bias", [width], bias),
        const("totals_weight", [1, 7], totals_weight),
        const("history_weight", [1, history_turns, 2], history_weight),
        const("seen_weight", [], [0.05]),
        const("half_columns", [1, width, 1, 1], [float(c in (2, 4, 6, 8)) for c in range(width)]),
        const("head_shape", [2], [side * side, width], TensorProto.INT64),
    ]
    inputs = [
        helper.make_tensor_value_info("compact", TensorProto.FLOAT, [1, 3, side, side]),
        helper.make_tensor_value_info("memory", TensorProto.FLOAT, [1, 6, side, side]),
        helper.make_tensor_value_info("history", TensorProto.FLOAT, [1, history_turns, 2]),
        helper.make_tensor_value_info("totals", TensorProto.FLOAT, [1, 7]),
    ]
    outputs = [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [side * side, width])]
    graph = helper.make_graph(nodes, "greedy", inputs, outputs, inits)
    m = helper.make_model(
        graph,
        producer_name="arena bots/generals-models/build.py",
        producer_version="1",
        opset_imports=[helper.make_opsetid("", OPSET)],
    )
    m.ir_version = IR_VERSION
    onnx.checker.check_model(m)
    toml = (
        f"# The greedy {ruleset} model: a fixed 3x3 convolution over the compact\n"
        "# planes and the memory (bots/generals-models/build.py writes this directory).\n"
        'adapters = "generals/1"\n\n'
        "[inputs.compact]\n"
        'adapter = "compact"\n\n'
        "[inputs.memory]\n"
        'adapter = "memory"\n\n'
        "[inputs.history]\n"
        'adapter = "history"\n'
        f"turns = {history_turns}\n\n"
        "[inputs.totals]\n"
        'adapter = "totals"\n\n'
        "[head]\n"
        'output = "scores"\n'
    )
    return m, toml


def retitled(toml, comment):
    """`toml` with its two-line opening comment replaced by `comment`."""
    return comment + toml.split("\n", 2)[2]


def nan(side, width):
    """The greedy graph with every score replaced by 0/0, computed from the
    input so that no simplification can fold it away: a strike each turn."""
    m, toml = greedy(side, width, "competition")
    graph = m.graph
    last = graph.node[-1]
    last.output[0] = "finite"
    graph.node.extend([
        helper.make_node("Sub", ["finite", "finite"], ["zero"]),
        helper.make_node("Div", ["zero", "zero"], ["scores"]),
    ])
    graph.name = "nan"
    onnx.checker.check_model(m)
    return m, retitled(
        toml,
        "# nan: the greedy model with every score NaN, a strike each turn (for the\n"
        "# tests; bots/generals-models/build.py writes this directory).\n",
    )


def huge_constant(side, width):
    """The greedy graph plus a 3.2 GB constant (800 million ones) summed into
    its scores times zero: small on disk, and tract materialises the
    constant while loading, so only a memory cap stops it."""
    m, toml = greedy(side, width, "competition")
    graph = m.graph
    graph.node[-1].output[0] = "plain"
    graph.initializer.extend([
        const("huge_shape", [1], [800_000_000], TensorProto.INT64),
        const("nothing", [], [0.0]),
    ])
    graph.node.extend([
        helper.make_node(
            "ConstantOfShape", ["huge_shape"], ["huge"],
            value=helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0]),
        ),
        helper.make_node("ReduceSum", ["huge"], ["huge_sum"], keepdims=0),
        helper.make_node("Mul", ["huge_sum", "nothing"], ["zero"]),
        helper.make_node("Add", ["plain", "zero"], ["scores"]),
    ])
    graph.name = "huge_constant"
    onnx.checker.check_model(m)
    return m, retitled(
        toml,
        "# huge-constant: the greedy model plus a 3.2 GB constant made at load (for\n"
        "# the tests; bots/generals-models/build.py writes this directory).\n",
    )


MODELS = {
    "generals-models/greedy": lambda: greedy(21, 10, "competition"),
    "generals-models/greedy-classic": lambda: greedy(23, 9, "classic"),
    # For the tests: a classic model fixed to 15x15, smaller than most boards.
    "test/generals-models/small-board": lambda: greedy(15, 9, "classic 15x15"),
    # For the tests: every score NaN, a strike each turn.
    "test/generals-models/nan": lambda: nan(21, 10),
    # For the tests: a load that needs more memory than a seat has.
    "test/generals-models/huge-constant": lambda: huge_constant(21, 10),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--bots", default=os.path.dirname(here))
    args = parser.parse_args()
    for rel, build in MODELS.items():
        m, toml = build()
        out = os.path.join(args.bots, rel)
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "model.onnx"), "wb") as f:
            f.write(m.SerializeToString())
        with open(os.path.join(out, "bot.toml"), "w") as f:
            f.write(toml)


if __name__ == "__main__":
    main()
