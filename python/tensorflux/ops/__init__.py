"""Op functions, grouped by family (array_ops, math_ops, control_flow_ops)."""
