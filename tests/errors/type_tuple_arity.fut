-- A tuple pattern with the wrong number of components is a compile-time
-- error.
-- ==
-- error: [Tt]ype|[Mm]ismatch|[Uu]nif|[Tt]uple|[Pp]attern

def main (x: i32) : i32 =
  let (a, b, c) = (x, x)
  in a + b + c
