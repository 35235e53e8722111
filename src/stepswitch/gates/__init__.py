"""Gates: the project's own checks decide when a change is done."""
