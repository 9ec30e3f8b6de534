-- The length of `counts` would have to be its own first element, a size
-- no caller can see in the function's type.
-- ==
-- error: scope-violation

def main counts = zip counts (iota counts[0])
