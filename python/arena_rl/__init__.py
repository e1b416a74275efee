"""Train where you are judged: Arena's referee engine as a reinforcement
learning environment.

``VecEnv`` steps many boards of one generals game at once on persistent
native threads and writes every seat's observation in place into NumPy
arrays it allocates once. The observation is exactly what the referee
sends that seat in an official match (``docs/rl.md``). Gymnasium and
PettingZoo adapters live in ``arena_rl.gym`` and ``arena_rl.pettingzoo``
(import them explicitly; they need those packages).
"""

from ._native import __version__
from .env import GAMES, VecEnv, decode_flat, encode_flat

__all__ = ["GAMES", "VecEnv", "decode_flat", "encode_flat", "__version__"]
