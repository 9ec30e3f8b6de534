-- `local open` brings a module's names into scope without making them
-- members of the enclosing module.
-- ==
-- error: has no member `base`

module Seven = { def base = 7i32 }

module Private = {
  local open Seven
  def seen = base - 2
}

def main = Private.base
