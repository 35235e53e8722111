"""The validated numbers, as JSON (the golden gate compares them)."""

import json
import math

from ode.integrators import integrate
from ode.systems import growth, oscillator, pendulum, pendulum_energy


def values() -> dict[str, float]:
    exp = integrate(growth(1.0), 0.0, (1.0,), 1.0, 50)[-1][1][0]
    sho = integrate(oscillator(2.0), 0.0, (1.0, 0.0), math.pi, 200)[-1][1]
    swing = integrate(pendulum(1.0), 0.0, (1.0, 0.0), 2.0, 400)
    theta, omega = swing[-1][1]
    drift = pendulum_energy(swing[-1][1], 1.0) - pendulum_energy(swing[0][1], 1.0)
    return {
        "exp_1": exp,
        "oscillator_x_pi": sho[0],
        "oscillator_v_pi": sho[1],
        "pendulum_theta_2s": theta,
        "pendulum_omega_2s": omega,
        "pendulum_energy_drift": drift,
    }


if __name__ == "__main__":
    print(json.dumps(values(), indent=2, sort_keys=True))
