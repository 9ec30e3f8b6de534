-- `def main` is the entry point when no entry point is named `main`, so
-- the entry point rules apply to it.
-- ==
-- error: Entry point functions may not be higher-order: the entry point `main` takes a function

def main (x: i32) (f: i32 -> i32, k: i32) = f x + k
