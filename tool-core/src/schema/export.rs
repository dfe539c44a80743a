//! Provider dialects of the tool list: canonical, OpenAI, Anthropic, Gemini, MCP.
