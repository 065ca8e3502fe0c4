"""`make grade` over a class: who is graded, the process pool, the ledger of inputs, the term's life cycle."""
