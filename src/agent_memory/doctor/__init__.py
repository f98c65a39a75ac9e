"""``agent-memory doctor``: is this Home sound, and what level does it reach?

Integrity checks and repairs of derived state, the §21 validation checklist, conformance levels
L0-L5, and golden recall tests (seed 000 §21; seed 003).
"""
