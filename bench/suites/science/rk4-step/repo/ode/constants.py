G0 = 9.80665  # standard gravity, m/s^2 (exact by definition)
