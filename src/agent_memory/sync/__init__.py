"""Sync: hand edits and new files in ``notes/`` become proper records.

The sync pass, git status, the Home's commits after a write, the items it reports, the note
scan, and the correction of a note by ``edit`` (DESIGN.md §9 "Corrections", §6).
"""
