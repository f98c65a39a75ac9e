"""Run the command-line interface as ``python -m agent_memory``."""

from agent_memory.cli import main

main()
