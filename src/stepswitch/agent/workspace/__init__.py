"""The worktree the agent acts on: path confinement and the run's git worktree."""
