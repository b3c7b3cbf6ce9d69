"""Graph-building core: dtypes, shapes, Tensor / Operation / Graph, op construction, import."""
