"""The training example end to end, small: examples/rl/train.py records
scripted games with arena_rl, trains its numpy policy, exports it to ONNX
(checked against the network with onnx's reference evaluator), and the
exported directory passes `arena model check` and plays sandboxed matches
against both starter bots without a strike."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def test_train_export_check_and_play(arena: str, tmp_path: Path):
    out = tmp_path / "policy"
    run = subprocess.run(
        [
            sys.executable, str(REPO / "examples" / "rl" / "train.py"), str(out),
            "--envs", "2", "--max-steps", "150", "--epochs", "2", "--games", "1", "--arena", arena,
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "passes (generals/1" in run.stdout, run.stdout
    assert "against starter-python" in run.stdout and "against starter-rust" in run.stdout, run.stdout
    assert (out / "model.onnx").stat().st_size > 0
    assert 'adapters = "generals/1"' in (out / "bot.toml").read_text()


def test_the_transformer_of_the_papers_shape_passes_the_check(arena: str, tmp_path: Path):
    out = tmp_path / "transformer"
    build = subprocess.run(
        [sys.executable, str(REPO / "examples" / "rl" / "transformer.py"), str(out), "--layers", "1", "--dim", "16", "--heads", "2"],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    check = subprocess.run([arena, "model", "check", str(out), "--game", "generals", "--json"], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    report = json.loads(check.stdout)
    assert report["head"]["shape"] == ["441", "10"], report
    assert {i["adapter"] for i in report["inputs"]} == {"compact", "memory", "history"}, report
