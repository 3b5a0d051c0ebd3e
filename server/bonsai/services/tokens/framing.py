"""How each provider family wraps messages in tokens beyond their text.

OpenAI documents its chat framing: every message costs 3 tokens plus its role
(one token for every role name) and 1 more when it carries a ``name``; every
reply is primed with 3 tokens. Tool calls and tool results are rendered in a
format OpenAI does not document, so counts that include them are at best
``high``. The other families use their chat templates' marker tokens
(DeepSeek's role markers, Qwen's ChatML) or a rough guess, marked undocumented.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from bonsai.services.tokens.types import Family


class FramingRule(BaseModel):
    """Fixed token costs a family adds around message text."""

    model_config = ConfigDict(frozen=True)

    per_message: int  # role and delimiters of one message
    per_name: int  # extra when a message carries a ``name``
    per_tool_call: int  # wrapper around one tool call's name and arguments
    reply_priming: int  # tokens that open the model's reply, once per request
    per_tool: int  # wrapper around one tool definition
    tools_block: int  # fixed cost once any tool is defined
    documented: bool  # True when the provider documents the message framing


FRAMING: dict[Family, FramingRule] = {
    "openai": FramingRule(
        per_message=4,
        per_name=1,
        per_tool_call=4,
        reply_priming=3,
        per_tool=8,
        tools_block=12,
        documented=True,
    ),
    # Anthropic prepends a tool-use system prompt of about 346 tokens.
    "anthropic": FramingRule(
        per_message=4,
        per_name=0,
        per_tool_call=8,
        reply_priming=1,
        per_tool=8,
        tools_block=346,
        documented=False,
    ),
    # <｜User｜>…<｜Assistant｜>…<｜end▁of▁sentence｜>
    "deepseek": FramingRule(
        per_message=2,
        per_name=0,
        per_tool_call=6,
        reply_priming=2,
        per_tool=8,
        tools_block=24,
        documented=False,
    ),
    # <|im_start|>role\n … <|im_end|>\n
    "qwen": FramingRule(
        per_message=5,
        per_name=0,
        per_tool_call=6,
        reply_priming=3,
        per_tool=8,
        tools_block=24,
        documented=False,
    ),
    "other": FramingRule(
        per_message=4,
        per_name=1,
        per_tool_call=6,
        reply_priming=3,
        per_tool=8,
        tools_block=24,
        documented=False,
    ),
}
