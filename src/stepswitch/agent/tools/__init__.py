"""The agent's tools: what a model may do to the worktree, and how."""
