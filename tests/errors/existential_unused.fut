-- A size bound by `?[n].` must be the size of an array outside function
-- types; here it is used only in a function's parameter type.
-- ==
-- error: Existential size "n" is not used as the size of an array

def mk (k: i32) : ?[n].([n]i32 -> i32) = \xs -> k + xs[0]

def main (k: i32) : i32 = mk k [1, 2]
