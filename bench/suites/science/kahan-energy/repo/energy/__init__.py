"""Smart-meter energy readings: parsing, totals, reports."""
