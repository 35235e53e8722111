"""Fixed-step ODE integrators for small systems, on plain tuples of floats."""
