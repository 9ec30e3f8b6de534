-- Applying a value that is not a function is a compile-time error.
-- ==
-- error: [Ff]unction|[Tt]ype|[Aa]ppl|[Uu]nif|[Mm]ismatch

def main (x: i32) : i32 = x 3
