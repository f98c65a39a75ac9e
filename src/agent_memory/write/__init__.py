"""The write path: how content enters a Home.

The plan of one write (normalise, dedup, write-time supersede or dispute, intents), proposals and
the apply gate, the dedup and subject lookup, records held for review, and corrections by id
(DESIGN.md §5 "Write", §9 "Write-time supersede").
"""
