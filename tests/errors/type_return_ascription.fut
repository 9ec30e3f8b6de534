-- A function body must match the declared return type.
-- ==
-- error: [Tt]ype|[Mm]ismatch|[Uu]nif

def main (x: i32) : bool = x + 1
