"""The agent's tools: what a model may do to the repository worktree, and how."""
