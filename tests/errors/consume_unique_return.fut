-- A result declared unique must not alias a non-unique parameter.
-- ==
-- error: [Uu]nique

def main (xs: []i32) : *[]i32 = xs[1:]
