"""The measured seconds of each test file, which order the tests gate's stages: learnt from every
stage's pytest (the `ssw_select` plugin writes them), kept in the suite's state folder when it
persists."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

DURATIONS_FILE = "test-durations.json"


@dataclass
class Durations:
    root: Path  # the worktree the test files are named relative to
    state_dir: Path
    persist: bool  # keep them in `state_dir` for later runs
    seconds: dict[str, float]  # test file (relative to `root`) -> seconds its tests took

    @classmethod
    def load(cls, root: Path, state_dir: Path, persist: bool) -> Durations:
        """The durations kept in `state_dir` (none when it holds no readable file)."""
        return cls(root, state_dir, persist, _read(state_dir / DURATIONS_FILE))

    def learn(self, path: Path) -> None:
        """Take in the durations a stage's pytest wrote to `path`, and keep them."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # the stage ended before pytest's session did
        seconds = data.get("seconds", {})
        rootdir = Path(str(data.get("rootdir", self.root)))
        for rel, value in seconds.items():
            try:
                key = (rootdir / rel).resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                continue
            self.seconds[key] = float(value)
        if self.persist:
            try:
                self.state_dir.mkdir(parents=True, exist_ok=True)
                target = self.state_dir / DURATIONS_FILE
                target.write_text(json.dumps(self.seconds, sort_keys=True), encoding="utf-8")
            except OSError:
                pass  # the durations only order the stages


def _read(path: Path) -> dict[str, float]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}
