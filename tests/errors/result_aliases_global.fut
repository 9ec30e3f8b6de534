-- The result of a function may alias its parameters, not a top-level
-- definition.
-- ==
-- error: result may alias the top-level definition `table`

def table : []i32 = [1, 2, 3]

def lookup (_i: i64) : []i32 = table

def main (i: i64) : []i32 = lookup i
