"""Recall: scored, state-aware, budgeted selection of whole records.

The service behind ``Memory.recall``, scoring and selection with reasons, the result types and
prompt block, version lookup by record time, and salience (seed 001 "Recall"; DESIGN.md §5 "Read").
"""
