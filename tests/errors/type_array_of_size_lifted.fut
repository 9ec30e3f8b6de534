-- A type declared size-lifted (`type~`) may be an array of any size, so it
-- cannot be an array element.
-- ==
-- error: Cannot create array with elements of size-lifted type "row"

type~ row = []i32

type table = [3]row

def main (x: i32) : i32 = x
