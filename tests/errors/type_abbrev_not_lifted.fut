-- A type abbreviation declared without `^` may not contain a function.
-- ==
-- error: Non-lifted type abbreviations may not contain functions..*type\^

type op = (i32, i32 -> i32)

def main (x: i32) : i32 = x
