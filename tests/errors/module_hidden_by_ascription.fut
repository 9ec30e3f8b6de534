-- Ascription hides the members the module type does not mention.
-- ==
-- error: has no member `secret`

module type S = { val public: i32 }

module M : S = {
  def secret = 1i32
  def public = secret + 1
}

def main (a: i32) : i32 = a + M.public + M.secret
