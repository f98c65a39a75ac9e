"""Carrying memory away and back.

MemoryFile export and import, the withdrawal states they carry, and ``migrate`` between stores
(seed 001 export/import; seed 000 §12.2).
"""
