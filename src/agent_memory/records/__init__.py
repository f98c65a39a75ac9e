"""The pure core: records and everything that makes one trustworthy on its own.

The record and its fields, the wire form and canonical JSON, the seven legal moves of the lifecycle,
signing, the Markdown note codec, MemoryFiles and their verification (seed 001; DESIGN.md §2-§4).
Imports nothing of the package but ``errors``.
"""
