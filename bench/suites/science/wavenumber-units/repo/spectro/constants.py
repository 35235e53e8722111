"""CODATA 2018 exact values and unit factors, SI."""

H = 6.62607015e-34  # J s
C = 299_792_458.0  # m/s
E_CHARGE = 1.602176634e-19  # C (1 eV = E_CHARGE J)
K_B = 1.380649e-23  # J/K
NM = 1e-9  # m
CM = 1e-2  # m
