"""Checks one `arena play --json` result for tests/guest/suite.sh.

    python3 tests/guest/check_result.py RESULT.json [SEAT:REASON,...]

Every seat must have played (at least one move) and forfeited exactly as
expected: the seats named in the second argument with that reason, every
other seat not at all. Prints one summary line, then any problem; exits 1
if there was one.
"""

import json
import sys


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        result = json.load(f)
    wanted = sys.argv[2] if len(sys.argv) > 2 else ""
    expected = dict(item.split(":", 1) for item in wanted.split(",") if item)
    problems = []
    faults = {}
    for player in result["players"]:
        seat, bot = str(player["seat"]), player["bot"]
        forfeit = player.get("forfeit")
        if forfeit != expected.get(seat):
            problems.append(
                f"seat {seat} ({bot}): forfeit {forfeit!r}, expected {expected.get(seat)!r}"
            )
        if player["moves"] < 1:
            problems.append(f"seat {seat} ({bot}): no moves")
        counted = {kind: n for kind, n in player["faults"].items() if n}
        if counted:
            faults[seat] = counted
    print(
        f"{result['game']}: {result['reason']} after {result['turns']} turns,"
        f" forfeits {expected or 'none'}, faults {faults or 'none'}"
    )
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
