-- A module is in scope only after its declaration.
-- ==
-- error: Unknown name "Later.value"

def early (x: i32) = x + Later.value

module Later = { def value = 3i32 }

def main (x: i32) = early x
