raise ImportError("stand-in: no torch here")
