"""Authorized erasure: tombstones in every holder, and the receipt that says so.

The porcelain, the erasure receipt, the sweep and sanitizing of the Home's file holders, and git
history as a holder (seed 000 §12; seed 001 redaction; DESIGN.md §9 "Erasure").
"""
