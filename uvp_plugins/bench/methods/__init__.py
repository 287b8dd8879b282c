"""Benchmark methods; each module registers its methods on import (framework imports stay inside the functions)."""
