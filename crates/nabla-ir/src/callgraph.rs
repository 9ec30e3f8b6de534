//! The call graph: which functions can reach themselves through calls.

use crate::{Exp, Nested, Program};

/// Which nodes of a directed graph lie on a cycle (a self-loop or a strongly
/// connected component of more than one node): Tarjan's algorithm, iterative,
/// linear in the size of the graph.
pub fn on_cycles(graph: &[Vec<usize>]) -> Vec<bool> {
    let n = graph.len();
    const UNSEEN: usize = usize::MAX;
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut out = vec![false; n];
    let mut next = 0;
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        // (node, next edge to follow)
        let mut work = vec![(root, 0usize)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut k)) = work.last_mut() {
            if let Some(&w) = graph[v].get(*k) {
                *k += 1;
                if index[w] == UNSEEN {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut members = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    members.push(w);
                    if w == v {
                        break;
                    }
                }
                let cyclic = members.len() > 1 || graph[v].contains(&v);
                for w in members {
                    out[w] = cyclic;
                }
            }
        }
    }
    out
}

/// Per function of `prog`: whether it can call itself, directly or through
/// other functions (it lies on a cycle of the call graph).
pub fn recursive_functions(prog: &Program) -> Vec<bool> {
    let n = prog.functions.len();
    let graph: Vec<Vec<usize>> = prog
        .functions
        .iter()
        .map(|f| {
            let mut out = Vec::new();
            let mut stack = vec![&f.body];
            while let Some(b) = stack.pop() {
                for s in &b.stms {
                    if let Exp::Apply(g, _) = &s.exp {
                        if (g.0 as usize) < n {
                            out.push(g.0 as usize);
                        }
                    }
                    s.exp.for_each_nested(|nested| match nested {
                        Nested::Body(nb) => stack.push(nb),
                        Nested::Lambda(l) => stack.push(&l.body),
                    });
                }
            }
            out
        })
        .collect();
    on_cycles(&graph)
}

#[cfg(test)]
mod tests {
    use super::on_cycles;

    #[test]
    fn cycles_are_found_in_linear_time() {
        // 0 -> 1 -> 2 -> 1, 3 -> 3, 4 -> 0
        let g = vec![vec![1], vec![2], vec![1], vec![3], vec![0]];
        assert_eq!(on_cycles(&g), vec![false, true, true, true, false]);
        // A long chain has no cycle (and is not quadratic to check).
        let chain: Vec<Vec<usize>> = (0..200_000)
            .map(|i| if i > 0 { vec![i - 1] } else { vec![] })
            .collect();
        assert!(on_cycles(&chain).iter().all(|c| !c));
    }
}
