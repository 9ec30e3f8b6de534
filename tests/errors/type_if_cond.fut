-- The condition of an if must be a bool.
-- ==
-- error: [Tt]ype|[Mm]ismatch|[Uu]nif|bool

def main (x: i32) : i32 = if x then 1 else 2
