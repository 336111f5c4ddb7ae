cuda = None
