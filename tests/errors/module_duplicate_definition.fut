-- A module may not define the same name twice (values and modules share
-- one name space), as in Futhark.
-- ==
-- error: Duplicate definition of value `scale`

module Shapes = {
  module scale = { def k = 2i32 }
  def scale (x: i32) = x * scale.k
}

def main (x: i32) = Shapes.scale x
