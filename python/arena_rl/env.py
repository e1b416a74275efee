"""The vectorised environment: many boards, every seat, one call per step."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Tuple, Union

import numpy as np

from ._native import NativeEnv

#: The games a ``VecEnv`` plays, with their formats.
GAMES = {
    "generals": "the Generals Competition ruleset: 1v1, castle builds, deathtouch from turn 800",
    "generals-classic": "classic generals.io: mode 1v1, 2v2 or ffa (2-8 seats)",
}

#: Seats each classic mode plays by default.
_DEFAULT_SEATS = {None: 2, "auto": 2, "1v1": 2, "2v2": 4, "ffa": 4}

Observation = Dict[str, np.ndarray]
Info = Dict[str, Any]


def encode_flat(kind: int, row: int, col: int, direction: int, split: int, *, side: int, builds: bool) -> int:
    """The flat head index of a five-integer action (a pass is 0)."""
    per_cell = 10 if builds else 9
    if kind == 1:
        return 0
    cell = row * side + col
    if kind == 2 and builds:
        return cell * per_cell + 9
    return cell * per_cell + 1 + 2 * direction + (1 if split == 1 else 0)


def decode_flat(index: int, *, side: int, builds: bool) -> Tuple[int, int, int, int, int]:
    """The five integers ``[pass, row, col, dir, split]`` of a flat head index."""
    per_cell = 10 if builds else 9
    cell, a = divmod(int(index), per_cell)
    row, col = divmod(cell, side)
    if a == 0:
        return (1, 0, 0, 0, 0)
    if a == 9:
        return (2, row, col, 0, 0)
    direction, half = divmod(a - 1, 2)
    return (0, row, col, direction, half)


class VecEnv:
    """``num_envs`` boards of one generals game, every seat's observation
    written in place.

    Every array has the shape ``(num_envs, seats, ...)`` (or
    ``(num_envs, ...)`` for per-board values). The arrays are allocated
    once; ``reset`` and ``step`` return the same objects every time, read
    only, valid until the next call. Copy what you keep.

    Parameters:
        game: ``"generals"`` or ``"generals-classic"``.
        num_envs: boards stepped together.
        mode: classic only: ``"1v1"``, ``"2v2"`` or ``"ffa"``.
        seats: seat count (default 2; 4 for 2v2 and ffa).
        seed: the boards' seed for the first ``reset`` without one.
        num_threads: native threads stepping the boards (each owns a
            contiguous run of them); results do not depend on it.
        observation: ``"compact"`` (tile, owner, army, header),
            ``"reference"`` or ``"both"`` (adds the reference environment's
            float tensor as ``"reference"``; the compact planes are always
            there).
        masks: add the legal-action masks as ``"mask"``.
        memory: add what a model seat's adapters give beyond the frame, as
            float32 arrays exactly as a model graph reads them in a match
            (``docs/games/generals-models.md``): ``"memory"`` (N, P, 6, S,
            S), ``"history"`` (N, P, 512, 2; the ``history`` adapter with
            ``turns=T`` is ``history[:, :, -T:]``) and ``"totals"`` (N, P, 7).
        side: the padded board side (default: the game's largest side).
        opponents: ``{seat: "scripted" | "random"}``: seats the environment
            plays itself; their actions are ignored.
        record: keep each episode's actions so ``save_replay`` can write it.
        **options: the game's options (``max_turns``, ...), checked by the
            engine's registry exactly as a tournament file's.
    """

    def __init__(
        self,
        game: str = "generals",
        num_envs: int = 1,
        *,
        mode: Optional[str] = None,
        seats: Optional[int] = None,
        seed: Optional[int] = None,
        num_threads: int = 1,
        observation: str = "compact",
        masks: bool = False,
        memory: bool = False,
        side: Optional[int] = None,
        opponents: Optional[Mapping[int, str]] = None,
        record: bool = True,
        **options: Union[int, str, bool],
    ) -> None:
        if observation not in ("compact", "reference", "both"):
            raise ValueError(f"observation must be 'compact', 'reference' or 'both', not {observation!r}")
        if mode is not None:
            options["mode"] = mode
        if seats is None:
            seats = _DEFAULT_SEATS.get(mode, 2)
        builtin = sorted((int(s), str(k)) for s, k in (opponents or {}).items())
        self._native = NativeEnv(
            game,
            int(seats),
            int(num_envs),
            int(num_threads),
            options,
            side,
            observation in ("reference", "both"),
            bool(masks),
            bool(memory),
            builtin,
            bool(record),
        )
        spec = self._native.spec()
        self.game: str = spec["game"]
        self.num_envs: int = spec["num_envs"]
        self.seats: int = spec["seats"]
        self.side: int = spec["side"]
        self.actions_per_cell: int = spec["actions_per_cell"]
        self.builds: bool = self.actions_per_cell == 10
        self.reference_channels: Tuple[str, ...] = tuple(spec["reference_channels"])
        self.builtin_seats: Tuple[int, ...] = tuple(spec["builtin"])
        self.num_threads: int = spec["num_threads"]
        self._seed = seed
        self.observations: Observation = {}
        self._step: Dict[str, np.ndarray] = {}
        self._info: Info = {}
        for name, (array, group) in self._native.arrays().items():
            array.flags.writeable = False
            {"obs": self.observations, "step": self._step, "info": self._info}[group][name] = array
        self._reason = np.full(self.num_envs, "", dtype=object)
        self._info["reason"] = self._reason
        self._reasons_set = False
        self._started = False

    @property
    def head_size(self) -> int:
        """Entries of one seat's action head: ``side * side * actions_per_cell``."""
        return self.side * self.side * self.actions_per_cell

    def reset(self, seed: Optional[int] = None) -> Tuple[Observation, Info]:
        """A new episode on every board. With ``seed`` (or the constructor's,
        on the first reset), every board's stream of maps restarts from it."""
        if seed is None and not self._started:
            seed = self._seed
        self._native.reset(None if seed is None else int(seed))
        self._started = True
        self._reason[:] = ""
        self._reasons_set = False
        return self.observations, self._info

    def step(self, actions: Any) -> Tuple[Observation, np.ndarray, np.ndarray, np.ndarray, Info]:
        """One step of every board.

        ``actions`` is an integer array of shape ``(num_envs, seats, 5)``
        (``[pass, row, col, dir, split]``) or ``(num_envs, seats)`` (flat
        head indices). A board whose episode ended on the previous step
        starts a new one instead, ignoring its actions (Gymnasium's
        next-step auto-reset): its reward is 0 and the observation is the
        new board's.
        """
        a = actions
        if not (isinstance(a, np.ndarray) and a.dtype == np.int64 and a.flags.c_contiguous):
            a = np.asarray(actions)
            if a.dtype.kind not in "iu":
                raise ValueError(f"actions must be integers, not {a.dtype}")
            a = np.ascontiguousarray(a, dtype=np.int64)
        n, p = self.num_envs, self.seats
        if a.shape == (n, p, 5):
            self._native.step_fields(a)
        elif a.shape == (n, p):
            self._native.step_flat(a)
        else:
            raise ValueError(f"actions have shape {a.shape}; expected ({n}, {p}, 5) or ({n}, {p})")
        terminated = self._step["terminated"]
        # Reasons are filled only for the boards that just ended, and
        # cleared the step after: most steps touch none of them.
        if self._reasons_set:
            self._reason[:] = ""
            self._reasons_set = False
        if terminated.any():
            for env in np.flatnonzero(terminated):
                self._reason[env] = self._native.reason(int(env))
            self._reasons_set = True
        return self.observations, self._step["reward"], terminated, self._step["truncated"], self._info

    def replay(self, env: int, *, finished: bool = True) -> bytes:
        """An episode of board ``env`` as an Arena replay (JSON bytes): the
        last one that finished, or with ``finished=False`` the one in
        progress. ``arena replay verify`` accepts a finished one."""
        return self._native.replay(int(env), finished)

    def save_replay(self, env: int, path: str, *, finished: bool = True) -> None:
        """Writes ``replay(env)`` to ``path``."""
        with open(path, "wb") as out:
            out.write(self.replay(env, finished=finished))

    def frame(self, env: int, seat: int) -> str:
        """The text frame the referee would send ``seat`` of board ``env`` now."""
        return self._native.frame(int(env), int(seat))

    def handshake(self, env: int, seat: int) -> str:
        """The handshake line ``seat`` of board ``env`` is sent first."""
        return self._native.handshake(int(env), int(seat))

    def state(self, env: int) -> str:
        """Board ``env`` without fog, as the engine's JSON (for rendering
        and analysis; the engine's own format)."""
        return self._native.state(int(env))

    def load_state(self, env: int, state: str) -> None:
        """Starts board ``env`` over from a state in the engine's JSON
        (``state()`` gives one)."""
        self._native.load(int(env), state)
        self._started = True

    def seat_view(self, env: int, seat: int) -> Observation:
        """One seat's observation, copied."""
        return {name: array[env, seat].copy() for name, array in self.observations.items()}

