-- The new value of a record field must have the field's type; the error
-- names the field path.
-- ==
-- error: record field "pos.x"

def move (p: {pos: {x: f32, y: f32}, id: i32}) = p with pos.x = 1i32
