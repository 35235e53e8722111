"""The peak table and laser photon energies, as JSON."""

import json

from spectro.convert import wavelength_nm_to_ev
from spectro.peaks import peak_table

if __name__ == "__main__":
    values = {
        "lasers_ev": {str(nm): wavelength_nm_to_ev(nm) for nm in (405.0, 532.0, 785.0)},
        "peaks": peak_table(),
    }
    print(json.dumps(values, indent=2, sort_keys=True))
