"""A tabulated standard atmosphere with linear interpolation."""
