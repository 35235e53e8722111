"""Two-body orbits: Kepler's equation and positions on an ellipse."""
