-- Naming a member a module does not have is a compile-time error that
-- names the module and the member.
-- ==
-- error: module `M` has no member `y`

module M = { def x = 1i32 }

def main (a: i32) : i32 = a + M.y
