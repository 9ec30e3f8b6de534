-- A type a module type specifies as non-lifted may not be defined as a
-- function type (`type^`), even if the module is never used.
-- ==
-- error: but module type requires a non-lifted type

module Handler : { type callback } = {
  type^ callback = i32 -> i32
}

def main (x: i32) = x
