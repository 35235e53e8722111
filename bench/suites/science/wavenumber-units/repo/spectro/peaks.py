from dataclasses import dataclass

from spectro.convert import ev_to_kelvin, wavenumber_to_ev, wavenumber_to_nm


@dataclass(frozen=True)
class Peak:
    name: str
    shift_cm: float

    @property
    def energy_ev(self) -> float:
        return wavenumber_to_ev(self.shift_cm)

    @property
    def kelvin(self) -> float:
        return ev_to_kelvin(self.energy_ev)

    def stokes_line_nm(self, laser_nm: float) -> float:
        """Where the Stokes line of this shift appears for a laser wavelength."""
        return wavenumber_to_nm(1 / (laser_nm * 1e-7) - self.shift_cm)


REFERENCE_PEAKS = (
    Peak("silicon", 520.7),
    Peak("diamond", 1332.5),
    Peak("water bend", 1640.0),
    Peak("water stretch", 3400.0),
)


def peak_table(laser_nm: float = 532.0) -> list[dict[str, float | str]]:
    return [
        {
            "name": p.name,
            "shift_cm": p.shift_cm,
            "energy_ev": p.energy_ev,
            "kelvin": p.kelvin,
            "stokes_nm": p.stokes_line_nm(laser_nm),
        }
        for p in REFERENCE_PEAKS
    ]
