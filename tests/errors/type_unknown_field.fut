-- Projecting a field that the record does not have is a compile-time
-- error.
-- ==
-- error: [Ff]ield|[Uu]nknown|[Tt]ype|[Rr]ecord|[Uu]nif

def main (x: i32) : i32 =
  let r = {a = x, b = 2}
  in r.c
