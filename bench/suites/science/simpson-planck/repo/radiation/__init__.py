"""Black-body radiation: Planck's law and its integrals."""
