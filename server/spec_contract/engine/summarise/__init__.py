"""Stage 2, module summaries: each file read once into plain, cacheable data (classes, imports, the
workers' flow records)."""
