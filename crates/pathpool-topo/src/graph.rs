//! A directed multigraph with typed indices.

/// Index of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeIx(pub u32);

/// Index of a directed edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EdgeId(pub u32);

/// A directed multigraph: nodes `0..n`, edges in insertion order.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    edges: Vec<(NodeIx, NodeIx)>,
    out: Vec<Vec<EdgeId>>,
}

impl Graph {
    /// A graph with `n` nodes and no edges.
    #[must_use]
    pub fn with_nodes(n: usize) -> Self {
        Graph {
            edges: Vec::new(),
            out: vec![Vec::new(); n],
        }
    }
    /// Adds a node without edges and returns its index.
    pub fn add_node(&mut self) -> NodeIx {
        self.out.push(Vec::new());
        NodeIx(self.out.len() as u32 - 1)
    }
    /// Adds a directed edge and returns its id.
    ///
    /// # Panics
    /// If either end is not a node of the graph.
    pub fn add_edge(&mut self, from: NodeIx, to: NodeIx) -> EdgeId {
        assert!((from.0 as usize) < self.out.len() && (to.0 as usize) < self.out.len());
        let id = EdgeId(self.edges.len() as u32);
        self.edges.push((from, to));
        self.out[from.0 as usize].push(id);
        id
    }
    /// Number of nodes.
    #[must_use]
    pub fn node_count(&self) -> usize {
        self.out.len()
    }
    /// Number of edges.
    #[must_use]
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }
    /// The `(from, to)` ends of an edge.
    #[must_use]
    pub fn ends(&self, e: EdgeId) -> (NodeIx, NodeIx) {
        self.edges[e.0 as usize]
    }
    /// Edges leaving `n`, in insertion order.
    #[must_use]
    pub fn out_edges(&self, n: NodeIx) -> &[EdgeId] {
        &self.out[n.0 as usize]
    }
}
