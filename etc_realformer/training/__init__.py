"""Training utilities: optimizers, schedules, callbacks, distribution."""
