-- A syntax error is reported at compile time.
-- ==
-- error: [Ss]yntax|[Pp]arse|[Uu]nexpected|[Ee]xpected

def main (x: i32) : i32 = (x +
