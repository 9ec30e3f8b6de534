-- Only a unique (`*`) accumulator parameter may be written.
-- ==
-- error: Consuming variable "a", which is not consumable

def put (a: intrinsics.acc ([4]i32)) (i: i64) = intrinsics.acc_write a i 0

def main (xs: *[4]i32) : [4]i32 = intrinsics.scatter_stream xs put (iota 2)
