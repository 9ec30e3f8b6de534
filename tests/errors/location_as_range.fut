-- `nabla test` reports where a compile error is as Futhark does: line,
-- first column and the column after the last one.
-- ==
-- error: location_as_range.fut:6:25-29

def main (x: f32) = x + true
