-- The result of a function may alias its parameters, not a top-level
-- definition.
-- ==
-- error: Function result aliases the free variable "table"

def table : []i32 = [1, 2, 3]

def lookup (_i: i64) : []i32 = table

def main (i: i64) : []i32 = lookup i
