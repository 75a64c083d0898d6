"""Storage: results on disk (atomic writes, checkpoints, locks) and sweep stores."""
