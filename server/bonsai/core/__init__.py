"""The pure core: context pipeline, budgets, ranking. No I/O, no clock, no pygls."""
