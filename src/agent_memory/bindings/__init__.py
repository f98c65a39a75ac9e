"""Agent bindings: the hot-entry block and MCP registration for each agent (seed 000 §8, §19; issue 8 item 4).

``agent-memory bind AGENT`` writes one marked block into the agent's own instruction file
(:mod:`~agent_memory.bindings.block`) and registers the ``agent-memory`` MCP server in the
agent's configuration format (:mod:`~agent_memory.bindings.mcp_config`), for the agents of
:mod:`~agent_memory.bindings.agents`; :mod:`~agent_memory.bindings.plan` plans every file
before writing any.
"""

from agent_memory.bindings.agents import AGENTS, Agent, McpTarget
from agent_memory.bindings.block import BEGIN, END, render_block, upsert_block
from agent_memory.bindings.plan import (
    FileChange,
    apply_changes,
    default_server_command,
    memory_root,
    plan_binding,
)

__all__ = [
    "AGENTS",
    "BEGIN",
    "END",
    "Agent",
    "FileChange",
    "McpTarget",
    "apply_changes",
    "default_server_command",
    "memory_root",
    "plan_binding",
    "render_block",
    "upsert_block",
]
