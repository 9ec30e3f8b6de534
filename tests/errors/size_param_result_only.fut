-- A size parameter named only in the result type takes its value from the
-- type the call's context gives the result (as the prelude's `rep` does);
-- where the context gives none (here `[]i32`), the call is rejected.
-- ==
-- error: Ambiguous size "n" arising from instantiated size parameter of "zeros": it cannot be determined

def zeros [n] (x: i32) : [n]i32 = replicate n x

def main (x: i32) : []i32 = zeros x
