-- An array type of functions cannot even be written.
-- ==
-- error: Cannot create array with elements of lifted type "i32 -> i32"

def apply_all (fs: [](i32 -> i32)) (x: i32) : i32 = x

def main (x: i32) : i32 = apply_all [] x
