"""agent-memory: long-term memory for LLM agents that a person can read, diff and carry away."""
