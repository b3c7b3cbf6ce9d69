"""Training: optimizers, slot variables, the global step and learning-rate schedules."""
