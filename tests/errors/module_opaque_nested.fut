-- The abstract type of a submodule specification is hidden too, and a
-- parametric abstract type is not its definition for any argument.
-- ==
-- error: expected `Outer.Stack.stack .*`, found `\[3\]i32`

module type stacks = {
  module Stack: {
    type~ stack 'a
    val empty 'a: () -> stack a
    val push 'a: a -> stack a -> stack a
    val size 'a: stack a -> i64
  }
}

module Outer : stacks = {
  module Stack = {
    type~ stack 'a = []a
    def empty 'a () : stack a = []
    def push 'a (x: a) (s: stack a) : stack a = s ++ [x]
    def size 'a (s: stack a) : i64 = length s
  }
}

def ok = Outer.Stack.size (Outer.Stack.push 1i32 (Outer.Stack.empty ()))

def main : i64 = Outer.Stack.size [1i32, 2, 3]
