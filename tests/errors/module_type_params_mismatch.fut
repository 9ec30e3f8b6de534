-- An abstract type takes the parameters its specification gives.
-- ==
-- error: Module defines\s+type grid = \[3\]\[3\]f64\s+but module type requires\s+type grid 'a

module type board = { type grid 'a }

module Tic : board = { type grid = [3][3]f64 }

def main (x: i32) = x
