GM_SUN = 1.32712440018e20  # m^3 s^-2 (IAU 2015 nominal)
AU = 149_597_870_700.0  # m (IAU 2012, exact)
DAY = 86_400.0  # s
