"""Fake servers for each provider's public wire format, one module each, on a shared base."""

from .anthropic import AnthropicServer
from .azure import AzureServer
from .base import PRESENT, ProviderServer, Received, Turn, judge_reply
from .gemini import GeminiServer
from .ollama import OllamaServer
from .openai_reasoning import ReasoningServer

__all__ = [
    "PRESENT",
    "AnthropicServer",
    "AzureServer",
    "GeminiServer",
    "OllamaServer",
    "ProviderServer",
    "ReasoningServer",
    "Received",
    "Turn",
    "judge_reply",
]
