"""The built-in log formats, one module each; importing this package registers them all in
:data:`models.importers.FORMATS` (the registry's home), in the order ``--from`` lists them.
Adding a format is one new module here that calls :func:`~models.importers.register_format`
(an extension calls ``turncheck.register_format`` from its own module)."""

import importlib

for _module in (
    "openai_chat",
    "openai_responses",
    "langchain",
    "agents_sqlite",
    "llamaindex",
    "anthropic",
    "gemini",
    "vercel",
    "otel",
    "adk",
    "langfuse",
    "langsmith",
    "bedrock",
    "claude_code",
    "pydantic_ai",
    "pi",
    "cline",
    "openhands",
    "goose",
):
    importlib.import_module(f"{__name__}.{_module}")
