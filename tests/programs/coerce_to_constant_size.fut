-- A coercion to a size named by a top-level constant (directly, through a
-- type abbreviation, or through a module's member) checks that size at
-- run time, as any other coercion does.
-- ==
-- entry: direct through_abbreviation through_module
-- input { 3i64 } output { [0i64, 1i64, 2i64] }
-- input { 2i64 } error: cannot match shape of type "\[3\]i64"

def width = 3i64

type row = [width]i64

module layout = {
  def cells = 3i64
  type cells_row = [cells]i64
}

entry direct (n: i64) = iota n :> [width]i64

entry through_abbreviation (n: i64) = iota n :> row

entry through_module (n: i64) = iota n :> layout.cells_row
