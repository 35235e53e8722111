"""`ssw demo`: a full scripted run on a small sample repository shipped with the package."""
