SECONDS_PER = {"d": 86_400, "h": 3_600, "m": 60, "s": 1}
ORDER = ("d", "h", "m", "s")
