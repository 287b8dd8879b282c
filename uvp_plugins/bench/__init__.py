"""The ``uvp-bench`` harness: problems, budgeted runs, methods and reports.

Framework packages (Optuna, Ray, SMAC) and benchmark data are imported only by the methods and
problems that need them, when they run.
"""
