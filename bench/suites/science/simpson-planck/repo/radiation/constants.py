"""CODATA 2018 exact and recommended values, SI units."""

H = 6.62607015e-34  # Planck constant, J s
C = 299_792_458.0  # speed of light, m/s
K_B = 1.380649e-23  # Boltzmann constant, J/K
SIGMA_SB = 5.670374419e-8  # Stefan-Boltzmann constant, W m^-2 K^-4
