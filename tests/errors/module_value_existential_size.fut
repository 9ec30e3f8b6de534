-- A module type that promises an array of the module's own length `len`
-- is not implemented by a value whose declared size is existential
-- (`[]`): that size is known only once the value is computed.
-- ==
-- error: Sizes "len" and "\[\]" do not match

module type buffer = {
  val len : i64
  val cells : [len]f32
}

module ring : buffer = {
  def len = 4i64
  def cells : []f32 = replicate (len * 2) 0f32
}

def main = ring.cells
