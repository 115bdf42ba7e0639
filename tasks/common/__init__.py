"""The task toolkit shared by every benchmark: the Task contract, its driver and helpers."""
