-- An integer literal must fit its inferred type: 200 is no i8 (the type
-- comes from the parameter it is added to).
-- ==
-- error: Literal 200 out of bounds for inferred type i8

def main (x: i8) = x + 200
