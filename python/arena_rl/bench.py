"""Environment steps per second, with every seat's observation written.

    python -m arena_rl.bench [--envs 512] [--steps 200] [--repeats 5] [--json]

Arena's figures: one step is one board moved one turn with both seats'
(all seats') observations written into the arrays. Both seats are played
by the built-in random player (a random legal move each, chosen in the
same native loop), so no Python runs per board; ``pass`` rows send passes
instead, as the reference's own benchmark does. Rows cover the compact and
the reference layouts on one thread and on every core, and the parallel
efficiency (``threads × one-thread rate`` against the measured rate).

When the reference environment (package ``generals`` with ``jax``) is
importable, its best CPU configuration runs in the same process on the
same board side: ``env.step`` (both players' observations, each folded into
a checksum so that none is optimised away) under ``vmap`` and ``lax.scan``
over the same number of boards, with pass actions, and the ratio is printed
beside Arena's ``pass`` rows. Pin the process to one core (``taskset -c 0``)
to compare per core: JAX otherwise spreads its work over every core.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Dict, List, Optional

import numpy as np

from .env import VecEnv


def _rate(env: VecEnv, steps: int, actions: np.ndarray) -> float:
    env.step(actions)  # warm: first step after reset restarts nothing, but touches every page
    start = time.perf_counter()
    for _ in range(steps):
        env.step(actions)
    elapsed = time.perf_counter() - start
    return env.num_envs * steps / elapsed


def arena_rates(game: str, envs: int, steps: int, repeats: int, threads: int, observation: str, players: str) -> List[float]:
    """Steps per second over `repeats` runs of `steps` calls."""
    probe = VecEnv(game, 1, record=False)
    opponents = {s: "random" for s in range(probe.seats)} if players == "random" else None
    env = VecEnv(game, envs, seed=1, num_threads=threads, observation=observation, record=False, opponents=opponents)
    env.reset()
    shape = (envs, env.seats)
    actions = np.zeros(shape, dtype=np.int64)  # flat index 0: a pass
    return [_rate(env, steps, actions) for _ in range(repeats)]


def reference_rates(side: int, envs: int, steps: int, repeats: int) -> Optional[Dict[str, object]]:
    """The reference environment's `env.step` under vmap + scan, or None
    when it cannot be imported."""
    try:
        import jax
        import jax.numpy as jnp
        import jax.random as jrandom
        from generals import GeneralsEnv
    except Exception as e:  # any import failure means "not available here"
        return {"available": False, "why": f"{type(e).__name__}: {e}"}
    try:
        env = GeneralsEnv(grid_dims=(side, side), truncation=500, pool_size=max(64, envs))
        pool, _ = env.reset(jrandom.PRNGKey(0))
        states = jax.vmap(env.init_state)(jrandom.split(jrandom.PRNGKey(1), envs))
        passes = jnp.tile(jnp.array([[1, 0, 0, 0, 0], [1, 0, 0, 0, 0]], dtype=jnp.int32), (envs, 1, 1))

        @jax.jit
        def run(states):
            # Every observation field is folded into the carry: without a
            # use, XLA would drop the observations as dead code and time the
            # rules alone.
            def body(carry, _):
                states, checksum = carry
                ts, new = jax.vmap(lambda s, a: env.step(s, a, pool))(states, passes)
                for leaf in jax.tree_util.tree_leaves(ts.observation):
                    checksum = checksum + jnp.sum(leaf.astype(jnp.int32))
                return (new, checksum), None

            final, _ = jax.lax.scan(body, (states, jnp.int32(0)), None, length=steps)
            return final

        jax.block_until_ready(run(states))
        rates = []
        for _ in range(repeats):
            start = time.perf_counter()
            jax.block_until_ready(jax.tree_util.tree_leaves(run(states)))
            rates.append(envs * steps / (time.perf_counter() - start))
        return {"available": True, "rates": rates, "devices": [str(d) for d in jax.devices()]}
    except Exception as e:
        return {"available": False, "why": f"{type(e).__name__}: {e}"}


def summary(rates: List[float]) -> Dict[str, float]:
    return {"median": statistics.median(rates), "min": min(rates), "max": max(rates)}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m arena_rl.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="generals")
    parser.add_argument("--envs", type=int, default=512)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="the 'all cores' row's thread count")
    parser.add_argument("--no-reference", action="store_true", help="skip the reference environment even if importable")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    side = VecEnv(args.game, 1, record=False).side
    rows = []
    for observation in ("compact", "reference"):
        for players in ("random", "pass"):
            one = arena_rates(args.game, args.envs, args.steps, args.repeats, 1, observation, players)
            row = {"layout": observation, "actions": players, "threads": 1, **summary(one)}
            rows.append(row)
            if args.threads > 1:
                many = arena_rates(args.game, args.envs, args.steps, args.repeats, args.threads, observation, players)
                rows.append({
                    "layout": observation,
                    "actions": players,
                    "threads": args.threads,
                    **summary(many),
                    "efficiency": statistics.median(many) / (args.threads * statistics.median(one)),
                })
    reference = None if args.no_reference else reference_rates(side, args.envs, args.steps, args.repeats)
    if reference and reference.get("available"):
        reference.update(summary(reference["rates"]))
    result = {"game": args.game, "side": side, "envs": args.envs, "steps": args.steps, "rows": rows, "reference": reference}

    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{args.game}: {args.envs} boards padded to {side}x{side}, {args.steps} steps x {args.repeats} runs")
    print(f"{'layout':<10} {'actions':<8} {'threads':>7} {'median steps/s':>15} {'min':>12} {'max':>12} {'efficiency':>10}")
    for r in rows:
        eff = f"{r['efficiency']:.2f}" if "efficiency" in r else ""
        print(f"{r['layout']:<10} {r['actions']:<8} {r['threads']:>7} {r['median']:>15,.0f} {r['min']:>12,.0f} {r['max']:>12,.0f} {eff:>10}")
    if reference is None:
        print("reference environment: skipped")
    elif not reference.get("available"):
        print(f"reference environment: not available ({reference['why']})")
    else:
        print(f"reference env.step, vmap + scan, pass actions, {side}x{side}: median {reference['median']:,.0f} steps/s ({reference['min']:,.0f}-{reference['max']:,.0f})")
        for r in rows:
            if r["threads"] == 1 and r["actions"] == "pass":
                print(f"  arena {r['layout']} / reference, one thread each: {r['median'] / reference['median']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
