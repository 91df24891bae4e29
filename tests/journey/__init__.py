"""Journey tests: the app as shipped, end to end, through the same Services as the window."""
