"""Course grade reports from a CSV of scores."""
