-- The branches of an if must have the same type.
-- ==
-- error: [Tt]ype|[Mm]ismatch|[Uu]nif

def main (b: bool) : i32 = if b then 1 else true
