"""Benchmark problems; each module registers its problem families on import."""
