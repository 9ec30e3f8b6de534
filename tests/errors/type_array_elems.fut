-- Array literal elements must all have the same type.
-- ==
-- error: [Tt]ype|[Mm]ismatch|[Uu]nif

def main (x: i32) : []i32 = [x, 2.0]
