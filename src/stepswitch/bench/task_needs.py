"""What a machine must have to judge a task: the Python packages its tests import (`requires`,
met by ssw's own interpreter) and the commands they run (`requires_tools`)."""

from __future__ import annotations

import importlib.metadata
import shutil
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stepswitch.bench.task import Task


def missing_requirements(task: Task) -> list[str]:
    """The task's requirements this interpreter does not meet, each with what it has instead."""
    missing = []
    for requirement in task.spec.requires:
        name, _, wanted = requirement.partition("==")
        try:
            have = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(f"{requirement} (not installed)")
            continue
        if wanted and have != wanted:
            missing.append(f"{requirement} (installed: {have})")
    return missing


def missing_tools(task: Task) -> list[str]:
    """The commands the task's tests run (`requires_tools`) that are not on PATH, each said."""
    return [f"the `{tool}` command" for tool in task.spec.requires_tools if not shutil.which(tool)]
