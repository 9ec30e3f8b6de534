-- `local` declarations are usable in the file that defines them.
-- ==
-- input { 2 } output { 7 }
-- input { -3 } output { -8 }

local def helper (x: i32) : i32 = x * 3

local type num = i32

def main (x: num) : num = helper x + 1
