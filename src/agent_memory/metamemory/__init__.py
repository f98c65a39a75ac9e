"""Metamemory: what recall served, what came of it, and what that teaches.

Retrieval, outcome and feedback events, their fold over the log, the policy they inform, and the
service on ``Memory`` (seed 000 §23, level L5).
"""
