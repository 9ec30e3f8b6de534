-- Module values whose sizes are the ones the module type promises: a
-- value with the module's length, and an existential result left
-- existential in the specification.
-- ==
-- input { 3i64 }
-- output { [1f32, 1f32, 1f32, 1f32] 3i64 }

module type buffer = {
  val len : i64
  val cells : [len]f32
  val positive [n] : [n]i64 -> []i64
}

module ring : buffer = {
  def len = 4i64
  def cells : [len]f32 = replicate len 1f32
  def positive (xs: []i64) : []i64 = filter (> 0) xs
}

def main (n: i64) = (copy ring.cells, length (ring.positive (iota (n + 1))))
